package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// Bad grpc settings are startup errors naming the key or flag.
func TestGRPCConfigErrors(t *testing.T) {
	size := func(n int64) *ByteSize { b := ByteSize(n); return &b }
	dur := func(d time.Duration) *Duration { v := Duration(d); return &v }
	n := func(i int) *int { return &i }
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		grpc GRPCConfig
		ov   Overrides
		want string
	}{
		{GRPCConfig{Addr: "8081"}, Overrides{}, `grpc.addr "8081": want HOST:PORT`},
		{GRPCConfig{}, Overrides{GRPCAddr: str("nowhere")}, `--grpc-addr "nowhere": want HOST:PORT`},
		{GRPCConfig{PublicAddr: "grpc://a2a.example.com:443"}, Overrides{}, `grpc.public_addr "grpc://a2a.example.com:443": want the HOST:PORT`},
		{GRPCConfig{}, Overrides{GRPCPublicAddr: str("a2a.example.com:0")}, `--grpc-public-addr "a2a.example.com:0"`},
		{GRPCConfig{MaxMessageSize: size(10)}, Overrides{}, "grpc.max_message_size 10: want 1KiB to 1GiB"},
		{GRPCConfig{KeepAlive: dur(time.Second)}, Overrides{}, "grpc.keepalive 1s: want 10s to 24h"},
		{GRPCConfig{KeepAliveTimeout: dur(time.Hour)}, Overrides{}, "grpc.keepalive_timeout 1h0m0s: want 1s to 10m"},
		{GRPCConfig{MaxConcurrentStreams: n(0)}, Overrides{}, "grpc.max_concurrent_streams 0: want 1 to 100000"},
	} {
		addr := "127.0.0.1:0"
		ov := c.ov
		ov.Addr = &addr
		_, err := New(context.Background(), &Config{Memory: true, GRPC: c.grpc}, Options{Overrides: &ov})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %+v: %v, want a *ConfigError with %q", c.grpc, c.ov, err, c.want)
		}
	}
	addr := "127.0.0.1:8089"
	_, err := New(context.Background(), &Config{Memory: true}, Options{Overrides: &Overrides{Addr: &addr, GRPCAddr: &addr}})
	if err == nil || !strings.Contains(err.Error(), "is the HTTP listen address") {
		t.Errorf("--grpc-addr equal to --addr: %v", err)
	}
}

// grpcInterfaceOf is the GRPC interface of an agent's card, nil when it
// lists none.
func grpcInterfaceOf(t *testing.T, cardURL string) map[string]string {
	t.Helper()
	_, body := testutil.Get(t, cardURL)
	var card struct {
		SupportedInterfaces []map[string]string `json:"supportedInterfaces"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	for _, i := range card.SupportedInterfaces {
		if i["protocolBinding"] == "GRPC" {
			return i
		}
	}
	return nil
}

func healthy(t *testing.T, addr string) error {
	t.Helper()
	conn, err := gogrpc.NewClient(addr, gogrpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "lf.a2a.v1.A2AService"})
	if err == nil && res.Status != healthpb.HealthCheckResponse_SERVING {
		err = errors.New(res.Status.String())
	}
	return err
}

// gRPC is served on the HTTP port and, with grpc.addr, on a port of its
// own, which cards then name; grpc.enabled false serves none and lists
// none.
func TestGRPCListeners(t *testing.T) {
	g := newTestGateway(t, &Config{GRPC: GRPCConfig{Addr: "127.0.0.1:0"}})
	ga := g.GRPCAddr()
	if ga == nil {
		t.Fatal("no gRPC listener of its own")
	}
	for _, a := range []string{g.Addr().String(), ga.String()} {
		if err := healthy(t, a); err != nil {
			t.Errorf("gRPC health on %s: %v", a, err)
		}
	}
	gi := grpcInterfaceOf(t, g.URL()+"/a2a/chat/.well-known/agent-card.json")
	_, port, _ := net.SplitHostPort(ga.String())
	if gi == nil || gi["url"] != "127.0.0.1:"+port || gi["tenant"] != "chat" || gi["protocolVersion"] != "1.0" {
		t.Fatalf("GRPC interface %v, want 127.0.0.1:%s with tenant chat", gi, port)
	}

	off := false
	g2 := newTestGateway(t, &Config{GRPC: GRPCConfig{Enabled: &off}})
	if gi := grpcInterfaceOf(t, g2.URL()+"/a2a/echo/.well-known/agent-card.json"); gi != nil {
		t.Fatalf("gRPC off, yet the card lists %v", gi)
	}
	if err := healthy(t, g2.Addr().String()); err == nil {
		t.Fatal("gRPC off, yet the HTTP port answers gRPC")
	}
	if got := strings.Join(g2.ServedBindings(), ","); got != "JSONRPC,HTTP+JSON" {
		t.Fatalf("served bindings %s", got)
	}

	public := newTestGateway(t, &Config{GRPC: GRPCConfig{PublicAddr: "a2a.example.com:" + strconv.Itoa(443)}})
	if gi := grpcInterfaceOf(t, public.URL()+"/a2a/echo/.well-known/agent-card.json"); gi == nil || gi["url"] != "a2a.example.com:443" {
		t.Fatalf("public_addr: %v", gi)
	}
}

// With A2A 0.3 alone there is no gRPC (an A2A 1.0 binding): off by
// default, an error when a gRPC listener is asked for.
func TestGRPCWith03Alone(t *testing.T) {
	g := newTestGateway(t, &Config{Protocols: []string{"0.3"}})
	if got := strings.Join(g.ServedBindings(), ","); got != "JSONRPC,HTTP+JSON" {
		t.Fatalf("served bindings %s", got)
	}
	addr, gaddr := "127.0.0.1:0", "127.0.0.1:0"
	_, err := New(context.Background(), &Config{Memory: true, Protocols: []string{"0.3"}}, Options{Overrides: &Overrides{Addr: &addr, GRPCAddr: &gaddr}})
	if err == nil || !strings.Contains(err.Error(), "--grpc-addr: the gRPC binding is A2A 1.0's") {
		t.Fatalf("--grpc-addr with 0.3 alone: %v", err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "a2abridge test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// With tls, one port serves HTTPS and gRPC over TLS (told apart by
// Content-Type), cards name https URLs, and grpc.addr is TLS too; a
// missing key is a startup error naming the flag.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	g := newTestGateway(t, &Config{TLS: &TLSConfig{CertFile: certFile, KeyFile: keyFile}, GRPC: GRPCConfig{Addr: "127.0.0.1:0"}})
	if !strings.HasPrefix(g.URL(), "https://") || !g.ServesTLS() {
		t.Fatalf("URL %s", g.URL())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, o := range []client.Options{{HTTPClient: hc}, {HTTPClient: hc, Binding: "GRPC"}} {
		c, err := client.Dial(ctx, g.URL()+"/a2a/echo", o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.SendMessage(ctx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("over TLS"))})
		if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s: %v %v", c.Interface(), res, err)
		}
		_ = c.Close()
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool})
	conn, err := gogrpc.NewClient(g.GRPCAddr().String(), gogrpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || res.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("gRPC over TLS on grpc.addr: %v %v", res, err)
	}

	addr := "127.0.0.1:0"
	_, err = New(context.Background(), &Config{Memory: true}, Options{Overrides: &Overrides{Addr: &addr, TLSCert: &certFile}})
	if err == nil || !strings.Contains(err.Error(), "--tls-cert without a key") {
		t.Fatalf("--tls-cert alone: %v", err)
	}
}
