package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
)

// The gRPC binding (A2A 1.0 §10): with Options.Binding "GRPC" and package
// client/grpc imported, a Client calls the card's GRPC interface, whose
// url is a gRPC target (host:port, dns:///host:port), with the
// operations' messages in protobuf's binary encoding (internal/wire/pb).
// Every call carries, as metadata, what HTTP requests carry as headers:
// a2a-version 1.0, a2a-extensions, the credentials of the card's schemes
// (authorization, an API key's header; to credential hosts only),
// Options.Headers and traceparent. Errors with an ErrorInfo of domain
// a2a-protocol.org are *a2a.Error; other statuses *GRPCError. Streams
// activate the event-log extension when the card declares it: each frame
// then carries its event's sequence number (pb.EventSeqField), which a
// resumed stream sends back as last-event-id.

// GRPCError is a gRPC status that is not an A2A error, from a GRPC
// interface: the server cannot be reached or is shutting down
// (UNAVAILABLE), a limit (RESOURCE_EXHAUSTED), a tenant that names no
// agent (NOT_FOUND), … Temporary ones are retried like HTTP 503.
type GRPCError struct {
	// Code is the status code (gRPC's numbering: 14 is UNAVAILABLE) and
	// Name its name.
	Code    int
	Name    string
	Message string
	// local: raised by the client's gRPC library (an answer over the
	// size limit, a failed TLS handshake), not temporary.
	local bool
}

func (e *GRPCError) Error() string {
	return fmt.Sprintf("a2a client: gRPC status %s: %s", e.Name, e.Message)
}

// Temporary reports whether repeating the call may succeed: UNAVAILABLE
// and RESOURCE_EXHAUSTED.
func (e *GRPCError) Temporary() bool { return !e.local && (e.Code == 14 || e.Code == 8) }

// grpcErr turns a connection's status into the client's error: the
// *a2a.Error it stands for, else a *GRPCError.
func grpcErr(err error) error {
	var s *grpcdial.Status
	if errors.As(err, &s) {
		if ae := s.A2A(); ae != nil {
			return ae
		}
		return &GRPCError{Code: s.Code, Name: s.Name, Message: s.Message, local: s.Local}
	}
	return err
}

// grpcTarget checks a GRPC interface's url: a gRPC target the official
// clients dial (host:port, or dns:///host:port), not a URL with a scheme
// or a path. It returns the host:port.
func grpcTarget(u string) (string, bool) {
	hp := strings.TrimPrefix(u, "dns:///")
	host, port, err := splitHostPort(hp)
	if err != nil || host == "" || strings.ContainsAny(hp, "/?#@ ") {
		return "", false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", false
	}
	return hp, true
}

// splitHostPort is net.SplitHostPort without importing net here.
func splitHostPort(hp string) (host, port string, err error) {
	u, err := url.Parse("grpc://" + hp)
	if err != nil || u.Port() == "" || u.Host != hp {
		return "", "", errors.New("not host:port")
	}
	return u.Hostname(), u.Port(), nil
}

// dialGRPC connects the client to its GRPC interface: TLS unless the
// card came over http:// (origin scheme), with the TLS configuration of
// Options.HTTPClient's transport when it has one.
func (c *Client) dialGRPC(secure bool) error {
	if grpcdial.Dial == nil {
		return fmt.Errorf("a2a client: agent %q: calling its GRPC interface needs package github.com/a2abridge/a2abridge/client/grpc (import it for its effect)", c.card.Name)
	}
	o := grpcdial.Options{TLS: secure, MaxRecvBytes: intLimit(c.opts.maxResponse()), Control: c.opts.DialControl}
	if t, ok := c.http.Transport.(*http.Transport); ok && t != nil && t.TLSClientConfig != nil {
		o.TLSConfig = t.TLSClientConfig.Clone()
	}
	conn, err := grpcdial.Dial(c.iface.URL, o)
	if err != nil {
		return fmt.Errorf("a2a client: agent %q: gRPC target %q: %w", c.card.Name, c.iface.URL, err)
	}
	c.grpc = conn
	return nil
}

// grpcMetadata is the metadata of a gRPC call of method: what an HTTP
// request of the client carries as headers, with lower-case keys, then
// extra (key, value pairs).
func (c *Client) grpcMetadata(ctx context.Context, method string, extra ...string) ([]string, error) {
	req := &http.Request{URL: &url.URL{Scheme: "https", Host: c.grpcHost}, Header: http.Header{}}
	req.Header.Set(versionHeader, a2a.Version10)
	if c.extensions != "" {
		req.Header.Set(extensionsHeader, c.extensions)
	}
	telemetry.Inject(ctx, req.Header)
	if err := c.authorize(ctx, req, method); err != nil {
		return nil, err
	}
	md := make([]string, 0, 2*len(req.Header)+len(extra))
	for k, vs := range req.Header {
		lk := strings.ToLower(k)
		for _, v := range vs {
			md = append(md, lk, v)
		}
	}
	return append(md, extra...), nil
}

// grpcCall performs a unary call of method with the request req (binary)
// and decodes its answer with dec; retried when retry and safe.
func grpcCall[T any](ctx context.Context, c *Client, method string, retry bool, req []byte, encErr error, dec func([]byte) (T, error)) (T, error) {
	var zero, out T
	if encErr != nil {
		return zero, encErr
	}
	err := c.withRetry(ctx, method, retry, func() error {
		md, err := c.grpcMetadata(ctx, method)
		if err != nil {
			return err
		}
		b, err := c.grpc.Invoke(ctx, method, md, req)
		if err != nil {
			return grpcErr(err)
		}
		if out, err = dec(b); err != nil {
			return protocolError(method, "invalid result", err)
		}
		return nil
	})
	if err != nil {
		return zero, err
	}
	return out, nil
}

func (c *Client) grpcGetTask(ctx context.Context, p a2a.GetTaskRequest) (*a2a.Task, error) {
	p.Tenant = c.tenant(p.Tenant)
	req, err := pb.AppendGetTaskRequest(nil, &p)
	return grpcCall(ctx, c, "GetTask", true, req, err, taskPtr)
}

func taskPtr(b []byte) (*a2a.Task, error) {
	t, err := pb.UnmarshalTask(b)
	return &t, err
}

func (c *Client) grpcListTasks(ctx context.Context, p a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	p.Tenant = c.tenant(p.Tenant)
	req, err := pb.AppendListTasksRequest(nil, &p)
	return grpcCall(ctx, c, "ListTasks", true, req, err, func(b []byte) (*a2a.ListTasksResponse, error) {
		r, err := pb.UnmarshalListTasksResponse(b)
		return &r, err
	})
}

func (c *Client) grpcCancelTask(ctx context.Context, p a2a.CancelTaskRequest) (*a2a.Task, error) {
	p.Tenant = c.tenant(p.Tenant)
	req, err := pb.AppendCancelTaskRequest(nil, &p)
	return grpcCall(ctx, c, "CancelTask", false, req, err, taskPtr)
}

func pushConfigPtr(b []byte) (*a2a.TaskPushNotificationConfig, error) {
	pc, err := pb.UnmarshalTaskPushNotificationConfig(b)
	return &pc, err
}

func (c *Client) grpcCreatePushConfig(ctx context.Context, cfg a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	cfg.Tenant = c.tenant(cfg.Tenant)
	req, err := pb.AppendTaskPushNotificationConfig(nil, &cfg)
	return grpcCall(ctx, c, "CreateTaskPushNotificationConfig", false, req, err, pushConfigPtr)
}

func (c *Client) grpcGetPushConfig(ctx context.Context, p a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	p.Tenant = c.tenant(p.Tenant)
	req, err := pb.AppendPushConfigIDRequest(nil, &p)
	return grpcCall(ctx, c, "GetTaskPushNotificationConfig", true, req, err, pushConfigPtr)
}

func (c *Client) grpcListPushConfigs(ctx context.Context, p a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, string, error) {
	p.Tenant = c.tenant(p.Tenant)
	req, err := pb.AppendListTaskPushNotificationConfigsRequest(nil, &p)
	var next string
	out, err := grpcCall(ctx, c, "ListTaskPushNotificationConfigs", true, req, err, func(b []byte) ([]a2a.TaskPushNotificationConfig, error) {
		cs, token, err := pb.UnmarshalListTaskPushNotificationConfigsResponse(b)
		next = token
		return cs, err
	})
	return out, next, err
}

func (c *Client) grpcDeletePushConfig(ctx context.Context, p a2a.DeleteTaskPushNotificationConfigRequest) error {
	gp := a2a.GetTaskPushNotificationConfigRequest(p)
	gp.Tenant = c.tenant(gp.Tenant)
	req, err := pb.AppendPushConfigIDRequest(nil, &gp)
	_, err = grpcCall(ctx, c, "DeleteTaskPushNotificationConfig", false, req, err, func([]byte) (struct{}, error) { return struct{}{}, nil })
	return err
}

// grpcExtendedCard is GetExtendedAgentCard over gRPC; with a
// CardVerifier, the card is verified as its A2A 1.0 JSON.
func (c *Client) grpcExtendedCard(ctx context.Context) (*a2a.AgentCard, error) {
	req, err := pb.AppendGetExtendedAgentCardRequest(nil, c.iface.Tenant)
	card, err := grpcCall(ctx, c, "GetExtendedAgentCard", true, req, err, pb.UnmarshalAgentCard)
	if err != nil || c.opts.CardVerifier == nil {
		return &card, err
	}
	b, err := v10.MarshalAgentCard(&card, v10.CardOptions{})
	if err != nil {
		return nil, protocolError("GetExtendedAgentCard", "invalid card", err)
	}
	// Verified as if fetched from the card's HTTP interface (where its
	// jku's origin is), else from the gRPC target's host.
	from := "https://" + c.grpcHost
	for _, it := range cardInterfaces(&c.card) {
		if absoluteHTTP(it.URL) {
			from = it.URL
			break
		}
	}
	card, err = c.decodeCard(ctx, from, "GetExtendedAgentCard", b)
	if err != nil {
		return nil, err
	}
	return &card, nil
}

// grpcFrames is an open gRPC stream of a call, as the stream loop reads
// it (frameSource).
type grpcFrames struct {
	st    grpcdial.Stream
	first []byte // the first message, read when the stream opened
	done  bool
	err   error // the first Recv's end, when it ended the stream
}

// openGRPC opens the stream of cl (its params are the binary request),
// resuming after lastID; the first message is read here, so that a
// refusal is an error of the opening (and retried like one).
func (c *Client) openGRPC(ctx context.Context, cl *call, lastID string) (frameSource, error) {
	var f *grpcFrames
	err := c.withRetry(ctx, cl.method, cl.retry, func() error {
		var extra []string
		if c.replayable {
			// Frames then carry their events' sequence numbers.
			extra = append(extra, "a2a-extensions", a2a.ExtensionEventLog)
		}
		if lastID != "" {
			extra = append(extra, "last-event-id", lastID)
		}
		md, err := c.grpcMetadata(ctx, cl.method, extra...)
		if err != nil {
			return err
		}
		st, err := c.grpc.Stream(ctx, cl.method, md, cl.params)
		if err != nil {
			return grpcErr(err)
		}
		b, err := st.Recv()
		switch {
		case errors.Is(err, io.EOF):
			f = &grpcFrames{st: st, done: true, err: io.EOF}
		case err != nil:
			st.Close()
			return grpcErr(err)
		default:
			f = &grpcFrames{st: st, first: b}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (f *grpcFrames) next(c *Client, cl *call) (a2a.Event, string, []byte, error, error) {
	var b []byte
	switch {
	case f.done:
		return nil, "", nil, f.err, nil
	case f.first != nil:
		b, f.first = f.first, nil
	default:
		var err error
		if b, err = f.st.Recv(); err != nil {
			err = grpcErr(err)
			if ge := (*GRPCError)(nil); errors.As(err, &ge) && ge.local && ge.Code == 8 {
				// A message over MaxRecvBytes: not a broken connection.
				return nil, "", nil, nil, tooLarge(cl.method, "a stream event", c.opts.maxResponse())
			}
			var ae *a2a.Error
			if errors.As(err, &ae) {
				return nil, "", nil, nil, ae // the server's error ends the stream
			}
			return nil, "", nil, err, nil
		}
	}
	ev, seq, err := pb.UnmarshalStreamResponseSeq(b)
	if err != nil {
		return nil, "", nil, nil, protocolError(cl.method, "invalid event in stream", err)
	}
	id := ""
	if seq > 0 {
		id = strconv.FormatInt(seq, 10)
	}
	return ev, id, b, nil, nil
}

func (f *grpcFrames) close() { f.st.Close() }
