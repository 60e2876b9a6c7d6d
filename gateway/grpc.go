package gateway

import (
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/server"
)

// GRPCConfig is the grpc block: the gRPC binding of A2A 1.0 (A2A 1.0
// §10), served by default on the HTTP port beside HTTP/1.1 (a connection
// that opens with the HTTP/2 preface is gRPC) and, with Addr, on a
// listener of its own. A request's tenant names its agent ("echo", or
// "echo/TENANT"; see server.GRPCServer); every card lists a GRPC
// interface whose url is the target the official clients dial.
type GRPCConfig struct {
	// Enabled serves gRPC; unset: true.
	Enabled *bool `yaml:"enabled"`
	// Addr is a listen address (HOST:PORT) for gRPC alone; cards then
	// name its port. "": gRPC on addr only.
	Addr string `yaml:"addr"`
	// PublicAddr is the gRPC target written into cards (HOST:PORT); "":
	// the host of the cards' base URL with the gRPC port.
	PublicAddr string `yaml:"public_addr"`
	// MaxMessageSize bounds a request message (1KiB to 1GiB); unset: the
	// body limit of HTTP (--max-body).
	MaxMessageSize *ByteSize `yaml:"max_message_size"`
	// KeepAlive is how long a connection may be idle before the server
	// pings it (10s to 24h); unset: 2h.
	KeepAlive *Duration `yaml:"keepalive"`
	// KeepAliveTimeout is how long that ping may stay unanswered before
	// the connection closes (1s to 10m); unset: 20s.
	KeepAliveTimeout *Duration `yaml:"keepalive_timeout"`
	// MaxConcurrentStreams bounds the calls open at once on one
	// connection (1 to 100000); unset: 1000.
	MaxConcurrentStreams *int `yaml:"max_concurrent_streams"`
}

// TLSConfig is the tls block: addr (and grpc.addr) serve TLS with this
// certificate: HTTPS, HTTP/2 by ALPN, and gRPC over TLS on the same port
// (its requests told from HTTP's by their Content-Type, application/grpc).
type TLSConfig struct {
	// CertFile and KeyFile are PEM files: the certificate chain and its
	// private key (--tls-cert, --tls-key).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// loadTLS reads the certificate of the tls block and the flags that
// override it; nil when neither sets one.
func loadTLS(file *TLSConfig, ov *Overrides, pre string) (*tls.Config, error) {
	var cert, key, certFrom, keyFrom string
	if file != nil {
		cert, key, certFrom, keyFrom = file.CertFile, file.KeyFile, pre+"tls.cert_file", pre+"tls.key_file"
	}
	if ov.TLSCert != nil {
		cert, certFrom = *ov.TLSCert, "--tls-cert"
	}
	if ov.TLSKey != nil {
		key, keyFrom = *ov.TLSKey, "--tls-key"
	}
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "":
		return nil, fmt.Errorf("%s without a certificate: give --tls-cert (tls.cert_file) too", keyFrom)
	case key == "":
		return nil, fmt.Errorf("%s without a key: give --tls-key (tls.key_file) too", certFrom)
	}
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("%s %q and %s %q: %w", certFrom, cert, keyFrom, key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, nil
}

// grpcSettings are the resolved grpc block and flags; nil: gRPC off.
type grpcSettings struct {
	addr string // "": no listener of its own
	opts server.GRPCOptions
}

// resolveGRPC checks the grpc block with the flags that override it
// (--grpc, --grpc-addr, --grpc-public-addr); pre starts errors about the
// block's keys. maxBody is the HTTP body limit, the default message bound.
func resolveGRPC(file GRPCConfig, ov *Overrides, pre, addr string, maxBody int64, protocols []string) (*grpcSettings, error) {
	on, onFrom := file.Enabled == nil || *file.Enabled, ""
	if file.Enabled != nil {
		onFrom = pre + "grpc.enabled"
	}
	if ov.GRPC != nil {
		on, onFrom = *ov.GRPC, "--grpc"
	}
	if !on {
		return nil, nil
	}
	if !slices.ContainsFunc(protocols, func(v string) bool { return strings.HasPrefix(v, "1") }) {
		// gRPC is an A2A 1.0 binding: off with 0.3 alone, and an error
		// when asked for.
		switch {
		case ov.GRPCAddr != nil && *ov.GRPCAddr != "":
			onFrom = "--grpc-addr"
		case file.Addr != "":
			onFrom = pre + "grpc.addr"
		}
		if onFrom != "" {
			return nil, fmt.Errorf("%s: the gRPC binding is A2A 1.0's, and only 0.3 is served (--protocols)", onFrom)
		}
		return nil, nil
	}
	s := &grpcSettings{addr: file.Addr}
	addrFrom := pre + "grpc.addr"
	if ov.GRPCAddr != nil {
		s.addr, addrFrom = *ov.GRPCAddr, "--grpc-addr"
	}
	if s.addr != "" {
		if _, _, err := net.SplitHostPort(s.addr); err != nil {
			return nil, fmt.Errorf("%s %q: want HOST:PORT (port 0 picks a free port)", addrFrom, s.addr)
		}
		if s.addr == addr && !strings.HasSuffix(addr, ":0") {
			return nil, fmt.Errorf("%s %q is the HTTP listen address: gRPC is served there already; name another port, or none", addrFrom, s.addr)
		}
	}
	s.opts.PublicAddr = file.PublicAddr
	publicFrom := pre + "grpc.public_addr"
	if ov.GRPCPublicAddr != nil {
		s.opts.PublicAddr, publicFrom = *ov.GRPCPublicAddr, "--grpc-public-addr"
	}
	if p := s.opts.PublicAddr; p != "" {
		host, port, err := net.SplitHostPort(p)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 || strings.ContainsAny(host, "/?#@ ") {
			return nil, fmt.Errorf("%s %q: want the HOST:PORT gRPC clients dial (no scheme, no path; a port from 1 to 65535)", publicFrom, p)
		}
	}
	s.opts.MaxRecvBytes = int(min(maxBody, 1<<30))
	if m := file.MaxMessageSize; m != nil {
		if *m < 1<<10 || *m > 1<<30 {
			return nil, fmt.Errorf("%sgrpc.max_message_size %d: want 1KiB to 1GiB", pre, int64(*m))
		}
		s.opts.MaxRecvBytes = int(*m)
	}
	if k := file.KeepAlive; k != nil {
		if d := time.Duration(*k); d < 10*time.Second || d > 24*time.Hour {
			return nil, fmt.Errorf("%sgrpc.keepalive %s: want 10s to 24h", pre, d)
		}
		s.opts.KeepAliveTime = time.Duration(*k)
	}
	if k := file.KeepAliveTimeout; k != nil {
		if d := time.Duration(*k); d < time.Second || d > 10*time.Minute {
			return nil, fmt.Errorf("%sgrpc.keepalive_timeout %s: want 1s to 10m", pre, d)
		}
		s.opts.KeepAliveTimeout = time.Duration(*k)
	}
	if n := file.MaxConcurrentStreams; n != nil {
		if *n < 1 || *n > 100000 {
			return nil, fmt.Errorf("%sgrpc.max_concurrent_streams %d: want 1 to 100000", pre, *n)
		}
		s.opts.MaxConcurrentStreams = uint32(*n)
	}
	return s, nil
}
