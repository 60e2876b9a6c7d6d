// Package grpc lets package client call agents over the gRPC binding of
// A2A 1.0 (A2A 1.0 §10, the service lf.a2a.v1.A2AService) when imported,
// for its effect only:
//
//	import _ "github.com/a2abridge/a2abridge/client/grpc"
//
// Then client.Options{Binding: "GRPC"} calls an agent's GRPC interface
// (see client.SelectInterface). Package client does not import it itself,
// so that a program that never calls gRPC does not link grpc-go.
package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/grpcframe"
)

func init() { grpcdial.Dial = dial }

// service is the A2A service's full name (a2a.proto).
const service = "/lf.a2a.v1.A2AService/"

func dial(target string, o grpcdial.Options) (grpcdial.Conn, error) {
	creds := insecure.NewCredentials()
	if o.TLS {
		cfg := o.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []gogrpc.DialOption{gogrpc.WithTransportCredentials(creds), gogrpc.WithDefaultCallOptions(gogrpc.ForceCodecV2(grpcframe.Codec{})),
		// Reconnect about as soon as the client's own retries come
		// (grpc-go waits a second or more by default, and a call made
		// meanwhile fails at once).
		gogrpc.WithConnectParams(gogrpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2,
			MaxDelay: 5 * time.Second}, MinConnectTimeout: 5 * time.Second})}
	if o.MaxRecvBytes > 0 {
		opts = append(opts, gogrpc.WithDefaultCallOptions(gogrpc.MaxCallRecvMsgSize(o.MaxRecvBytes)))
	}
	if o.Control != nil {
		d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: o.Control}
		opts = append(opts, gogrpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}))
	}
	cc, err := gogrpc.NewClient(target, opts...)
	if err != nil {
		return nil, err
	}
	return &conn{cc: cc}, nil
}

type conn struct{ cc *gogrpc.ClientConn }

func (c *conn) Invoke(ctx context.Context, method string, md []string, req []byte) ([]byte, error) {
	var out grpcframe.Frame
	err := c.cc.Invoke(metadata.AppendToOutgoingContext(ctx, md...), service+method, &grpcframe.Frame{B: req}, &out)
	if err != nil {
		return nil, errorOf(ctx, err)
	}
	return out.B, nil
}

func (c *conn) Stream(ctx context.Context, method string, md []string, req []byte) (grpcdial.Stream, error) {
	sctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, md...))
	st, err := c.cc.NewStream(sctx, &gogrpc.StreamDesc{StreamName: method, ServerStreams: true}, service+method)
	if err == nil {
		err = st.SendMsg(&grpcframe.Frame{B: req})
		if errors.Is(err, io.EOF) {
			// The stream ended before the request went: its status
			// comes with RecvMsg.
			err = st.RecvMsg(&grpcframe.Frame{})
		}
	}
	if err == nil {
		err = st.CloseSend()
	}
	if err != nil {
		err = errorOf(ctx, err) // the caller's ctx: the stream's is canceled next
		cancel()
		return nil, err
	}
	return &stream{st: st, ctx: sctx, parent: ctx, cancel: cancel}, nil
}

func (c *conn) Close() error { return c.cc.Close() }

type stream struct {
	st          gogrpc.ClientStream
	ctx, parent context.Context
	cancel      context.CancelFunc
}

func (s *stream) Recv() ([]byte, error) {
	var f grpcframe.Frame
	if err := s.st.RecvMsg(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, errorOf(s.parent, err)
	}
	return f.B, nil
}

func (s *stream) Close() { s.cancel() }

// errorOf is the error a call's err stands for: the error of the
// caller's ctx when it ended, else a *grpcdial.Status with the status's
// ErrorInfo (Local for what grpc-go raised itself and repeating cannot
// mend: an answer over the size limit, a failed TLS handshake).
func errorOf(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	out := &grpcdial.Status{Code: int(st.Code()), Name: strings.ToUpper(codeName(st.Code())), Message: st.Message()}
	msg := st.Message()
	out.Local = st.Code() == codes.ResourceExhausted && strings.Contains(msg, "received message larger than max") ||
		st.Code() == codes.Unavailable && strings.Contains(msg, "authentication handshake failed")
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			out.Info = &grpcdial.ErrorInfo{Reason: info.Reason, Domain: info.Domain, Metadata: info.Metadata}
			break
		}
	}
	return out
}

// codeName is the status code's name as the gRPC specification spells it
// (UNAVAILABLE, RESOURCE_EXHAUSTED).
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}
