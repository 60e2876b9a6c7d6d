package interop

// A2A 1.0 interop: the official Go SDK v2 client (github.com/a2aproject/a2a-go/v2
// v2.4.0, a2aclient with its DEFAULT factory: JSON-RPC and HTTP+JSON
// transports, default HTTP clients, agentcard.DefaultResolver) runs one
// scenario (card → send → stream → get → list → cancel → subscribe → push
// config CRUD) once per binding against each target:
//
//	a2abridge           `a2abridge serve --memory`
//	a2abridge-replicas  three `a2abridge serve --replica` on one PostgreSQL schema behind nginx
//	                    (round robin, SSE unbuffered); push included, the proxy as --public-url
//	peer-a2agov2        cmd/peer-a2agov2 (a2a-go v2 server), which validates the scenario itself
//	peer-js-v1          ../js/peer-server-v1.mjs (@a2a-js/sdk 1.3.0 server; skipped without ../js/node_modules)
//
// The binding is chosen the way an application would: Config.PreferredTransports
// with the one binding (nothing else of the factory is changed), and a passive
// CallInterceptor checks that every call went to that binding's URL from the card.
// Where a peer SDK departs from the specification, the scenario asserts what that
// SDK does (see v1Quirks); the a2abridge targets are held to the specification.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpcv1 "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

const (
	// v1PeerPkg is the a2a-go v2 peer command, built from this module.
	v1PeerPkg = "./cmd/peer-a2agov2"
)

type v1Kind int

const (
	v1Ours v1Kind = iota
	v1GoPeer
	v1JSPeer
)

// v1Target is one server under test.
type v1Target struct {
	name string
	kind v1Kind
	base string // http://127.0.0.1:PORT
	skip string // why the target is skipped, if it is
	// grpc: the target serves the gRPC binding too, which the scenario
	// then runs over as well.
	grpc bool
}

// bindings are the bindings the scenario runs over against tg.
func (tg *v1Target) bindings() []a2a.TransportProtocol {
	if tg.grpc {
		return append(slices.Clip(v1Bindings), a2a.TransportProtocolGRPC)
	}
	return v1Bindings
}

// v1Quirks are the measured departures of a server (as seen by this client)
// from the specification that the scenario accepts for that server only.
type v1Quirks struct {
	// sendTerminal is the error of SendMessage to a completed task
	// (specification: UnsupportedOperationError).
	sendTerminal error
	// subscribeTerminal is the error of SubscribeToTask on a completed task
	// (specification: UnsupportedOperationError).
	subscribeTerminal error
	// pushGetDeleted is the error of GetTaskPushNotificationConfig after
	// the config was deleted (the specification names none; TaskNotFound is
	// the closest, and what a2abridge is expected to answer).
	pushGetDeleted error
	// pushTokenHeader is the header that carries the config's token when
	// authentication is set too ("" = none; the specification names no
	// header; for a2abridge either A2A-Notification-Token or
	// X-A2A-Notification-Token is accepted).
	pushTokenHeader string
	// restErrorsUnreadable: the server answers REST errors as
	// application/a2a+json, which the a2a-go v2 REST client does not decode
	// (it reads google.rpc.Status only from application/json): every REST
	// error reaches the caller as ErrServerError.
	restErrorsUnreadable bool
	// restPushCreated: the server answers a REST CreateTaskPushNotificationConfig
	// with 201 Created and a DeleteTaskPushNotificationConfig with 204 No
	// Content; the a2a-go v2 REST client takes every status but 200 for an
	// error (ErrServerError, as the body is not application/json), though
	// the config was created or deleted all the same.
	restPushCreated bool
	// jsonrpcStreamErrorsPlain: the server answers a streaming JSON-RPC
	// request that fails before its first event with a plain JSON-RPC error
	// (application/json), which the a2a-go v2 client reads as an empty
	// stream: no event, no error.
	jsonrpcStreamErrorsPlain bool
	// pushSecretsRedacted: Get and List return a push config's token and
	// credentials empty (a2abridge by default; the specification says
	// nothing either way).
	pushSecretsRedacted bool
}

func (tg *v1Target) quirks() v1Quirks {
	switch tg.kind {
	case v1GoPeer:
		return v1Quirks{
			// Only running executions can be joined; anything else is
			// "task not found: no active execution".
			subscribeTerminal: a2a.ErrTaskNotFound,
			sendTerminal:      a2a.ErrInvalidParams,
			// push.ErrPushConfigNotFound has no A2A code: -32603 / HTTP 500.
			pushGetDeleted:  a2a.ErrInternalError,
			pushTokenHeader: "A2A-Notification-Token",
		}
	case v1JSPeer:
		return v1Quirks{
			subscribeTerminal: a2a.ErrUnsupportedOperation,
			sendTerminal:      a2a.ErrUnsupportedOperation,
			pushGetDeleted:    a2a.ErrTaskNotFound,
			// DefaultPushNotificationSender sends X-A2A-Notification-Token
			// only for a config without authentication.
			pushTokenHeader:          "",
			restErrorsUnreadable:     true,
			restPushCreated:          true,
			jsonrpcStreamErrorsPlain: true,
		}
	default:
		return v1Quirks{
			subscribeTerminal:   a2a.ErrUnsupportedOperation,
			sendTerminal:        a2a.ErrUnsupportedOperation,
			pushGetDeleted:      a2a.ErrTaskNotFound,
			pushTokenHeader:     "either",
			pushSecretsRedacted: true,
		}
	}
}

// wantErr checks err against the SDK sentinel target, as this client sees
// errors of this server over e.binding (see v1Quirks.restErrorsUnreadable).
func (e *v1Env) wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if e.binding == a2a.TransportProtocolHTTPJSON && e.tg.quirks().restErrorsUnreadable {
		target = a2a.ErrServerError
	}
	v1WantErr(t, what, err, target)
}

// wantStreamErr checks a stream that must fail before its first event.
func (e *v1Env) wantStreamErr(t *testing.T, what string, evs []a2a.Event, err, target error) {
	t.Helper()
	if len(evs) != 0 {
		t.Errorf("%s: events %s before the error", what, v1Describe(evs))
	}
	if e.binding == a2a.TransportProtocolJSONRPC && e.tg.quirks().jsonrpcStreamErrorsPlain {
		if err != nil {
			t.Errorf("%s: error %v; this server's plain JSON error reads as an empty stream", what, err)
		}
		return
	}
	e.wantErr(t, what, err, target)
}

var v1Bindings = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}

// v1BindingName is the subtest name of a binding.
func v1BindingName(b a2a.TransportProtocol) string {
	if b == a2a.TransportProtocolHTTPJSON {
		return "REST"
	}
	return string(b)
}

// TestV1Client runs the A2A 1.0 scenario with the a2a-go v2 client against
// every target, over JSON-RPC and over HTTP+JSON, and over gRPC (its
// a2agrpc/v1 transport) where the target serves it:
// TestV1Client/{a2abridge,a2abridge-replicas,peer-a2agov2,peer-js-v1}/{JSONRPC,REST,GRPC}/{Card,…}.
func TestV1Client(t *testing.T) {
	targets := []*v1Target{v1StartOurs(t), v1StartOursReplicas(t), v1StartGoPeer(t, false), v1StartJSPeer(t)}
	scenarios := []struct {
		name string
		run  func(t *testing.T, e *v1Env)
	}{
		{"Card", v1Card},
		{"Send", v1Send},
		{"Chat", v1Chat},
		{"Stream", v1Stream},
		{"Get", v1Get},
		{"List", v1List},
		{"Cancel", v1Cancel},
		{"Subscribe", v1Subscribe},
		{"PushConfig", v1PushConfig},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			if tg.skip != "" {
				skipOrFail(t, tg.skip)
			}
			for _, b := range tg.bindings() {
				t.Run(v1BindingName(b), func(t *testing.T) {
					t.Parallel()
					for _, sc := range scenarios {
						t.Run(sc.name, func(t *testing.T) {
							t.Parallel()
							sc.run(t, &v1Env{tg: tg, binding: b})
						})
					}
				})
			}
		})
	}
}

// TestV1ClientCompatPeer checks peer-a2agov2 --compat: the 1.0 client still
// picks the 1.0 interfaces of the union card, and the a2a-go v0.3 client
// (the 0.3 peer tests' resolver and factory) talks 0.3 to the same agents.
func TestV1ClientCompatPeer(t *testing.T) {
	tg := v1StartGoPeer(t, true)
	for _, b := range v1Bindings {
		t.Run(v1BindingName(b), func(t *testing.T) {
			t.Parallel()
			e := &v1Env{tg: tg, binding: b}
			ctx := v1Ctx(t)
			card := e.card(t, ctx, "echo")
			if got := len(card.SupportedInterfaces); got != 4 {
				t.Fatalf("compat card: %d interfaces, want 4 (1.0 and 0.3, JSON-RPC and REST): %s", got, v1Ifaces(card))
			}
			c := e.clientFromCard(t, ctx, card)
			task := v1SendTask(t, ctx, c, v1Text("compat peer", "", ""))
			if task.Status.State != a2a.TaskStateCompleted || v1ArtifactText(task) != "compat peer" {
				t.Errorf("send: state %s artifact %q", task.Status.State, v1ArtifactText(task))
			}
		})
	}
	t.Run("v0.3 client", func(t *testing.T) {
		t.Parallel()
		h := &harness{base: tg.base, http: &http.Client{}}
		card := h.card(t, "echo")
		if card.ProtocolVersion != "0.3" || card.URL != tg.base+"/a2a/echo/v0.3" {
			t.Fatalf("compat card as 0.3: protocolVersion %q url %q", card.ProtocolVersion, card.URL)
		}
		task := send(t, h.ctx(t), h.clientFromCard(t, card, false), userText("over 0.3"))
		if task.Status.State != "completed" || artifactText(task) != "over 0.3" {
			t.Errorf("0.3 send: state %s artifact %q", task.Status.State, artifactText(task))
		}
	})
}

// ---------------------------------------------------------------- targets

func v1StartOurs(t *testing.T) *v1Target {
	tg := &v1Target{name: "a2abridge", kind: v1Ours, grpc: true}
	tg.base = startServer(t, "--memory", "--push-allow", "127.0.0.0/8").base
	return tg
}

// v1ReplicasDSN is the PostgreSQL database in which the replicas target
// creates its schema (as internal/pgtest).
func v1ReplicasDSN() string {
	if d := os.Getenv("A2ABRIDGE_TEST_POSTGRES"); d != "" {
		return d
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// v1LookPath is a command's path: on PATH, or the first of paths that exists.
func v1LookPath(name string, paths ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// v1Psql runs one SQL command with psql on v1ReplicasDSN.
func v1Psql(psql, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", v1ReplicasDSN(), "-c", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql -c %q: %v\n%s", sql, err, out)
	}
	return nil
}

// v1StartOursReplicas starts three `a2abridge serve --replica` on a new
// PostgreSQL schema (dropped when the test ends) behind nginx, a
// round-robin reverse proxy configured for SSE (unbuffered), so the
// consecutive calls of one client land on different replicas. Without
// nginx, psql or a reachable PostgreSQL the target is skipped (under CI:
// fails, see skipOrFail).
func v1StartOursReplicas(t *testing.T) *v1Target {
	t.Helper()
	tg := &v1Target{name: "a2abridge-replicas", kind: v1Ours}
	nginx, psql, isready := v1LookPath("nginx", "/usr/sbin/nginx"), v1LookPath("psql"), v1LookPath("pg_isready")
	if nginx == "" || psql == "" || isready == "" {
		tg.skip = "the replicas target needs nginx, psql and pg_isready (apt-get install nginx-light postgresql-client)"
		return tg
	}
	if out, err := exec.Command(isready, "-d", v1ReplicasDSN(), "-t", "5").CombinedOutput(); err != nil {
		tg.skip = fmt.Sprintf("PostgreSQL is not accepting connections (pg_isready: %s); "+
			"start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set A2ABRIDGE_TEST_POSTGRES", strings.TrimSpace(string(out)))
		return tg
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "a2abridge_interop_" + hex.EncodeToString(b[:])
	if err := v1Psql(psql, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the schema is dropped after the replicas
	// (registered below) stopped.
	t.Cleanup(func() {
		if err := v1Psql(psql, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	dsn := v1ReplicasDSN()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if strings.Contains(dsn, "?") {
			dsn += "&search_path=" + schema
		} else {
			dsn += "?search_path=" + schema
		}
	} else {
		dsn += " search_path=" + schema
	}
	// The proxy's address is every replica's --public-url (the issuer of
	// their push tokens, the URL of their cards).
	proxy := fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))
	var upstreams []string
	for range 3 {
		s := startServer(t, "--replica", "--postgres", dsn, "--lease", "3s", "--push-allow", "127.0.0.0/8", "--public-url", "http://"+proxy)
		upstreams = append(upstreams, strings.TrimPrefix(s.base, "http://"))
	}
	tg.base = v1StartNginx(t, nginx, proxy, upstreams)
	return tg
}

// v1StartNginx runs nginx on addr (a free loopback host:port) as a
// round-robin reverse proxy to upstreams (host:port) until the test ends,
// and returns its base URL. The configuration is testdata/nginx-replicas.conf, as
// TestServeReplicas's: no buffering, so SSE events pass at once; a long
// read timeout for streams; one process, so the parent-death signal of
// sysProcAttr covers all of it.
func v1StartNginx(t *testing.T, bin, addr string, upstreams []string) string {
	t.Helper()
	dir := t.TempDir()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "testdata", "nginx-replicas.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, u := range upstreams {
		servers = append(servers, fmt.Sprintf("    server %s max_fails=1 fail_timeout=5s;", u))
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers would run as nobody, who cannot use dir
	}
	conf := strings.NewReplacer("@USER@", user, "@DIR@", dir, "@UPSTREAMS@", strings.Join(servers, "\n"), "@LISTEN@", addr, "@GRPC@", "").Replace(string(tmpl))
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.Buffer{}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "error.log")); t.Failed() && len(log) > 0 {
			t.Logf("nginx %s error.log:\n%s", addr, log)
		}
	})
	for deadline := time.Now().Add(startTimeout); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited before listening on %s: %s\n%s", addr, stderr.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %s within %s: %s\n%s", addr, startTimeout, stderr.String(), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// v1PeerBin builds cmd/peer-a2agov2 once per test binary, next to the
// a2abridge binary that TestMain builds (and removes).
var v1PeerBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(binPath), exe("peer-a2agov2"))
	if err := goBuild(context.Background(), ".", bin, v1PeerPkg); err != nil {
		return "", err
	}
	return bin, nil
})

// v1StartGoPeer starts cmd/peer-a2agov2 (with --compat if set).
func v1StartGoPeer(t *testing.T, compat bool) *v1Target {
	t.Helper()
	bin, err := v1PeerBin()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--keep-alive", "250ms", "--log-level", "info"}
	if compat {
		args = append(args, "--compat")
	}
	if dir := os.Getenv("A2A_V1_WIRE_LOG_DIR"); dir != "" {
		name := "go-client.peer-a2agov2"
		if compat {
			name += "-compat"
		}
		args = append(args, "--wire-log", filepath.Join(dir, name+".log"))
	}
	return &v1Target{name: "peer-a2agov2", kind: v1GoPeer, base: startPeer(t, bin, args...).base}
}

// v1StartJSPeer starts `node peer-server-v1.mjs --port 0` in ../js; without
// ../js/node_modules/@a2a-js/sdk-v1 (npm ci not run) the target is skipped.
func v1StartJSPeer(t *testing.T) *v1Target {
	t.Helper()
	tg := &v1Target{name: "peer-js-v1", kind: v1JSPeer}
	args := []string{"--port", "0"}
	if d := os.Getenv("A2A_V1_WIRE_LOG_DIR"); d != "" {
		args = append(args, "--wire-log", filepath.Join(d, "go-client.peer-js-v1.log"))
	}
	tg.base, tg.skip = startNodePeer(t, "JS v1 peer", "sdk-v1", "peer-server-v1.mjs", args...)
	return tg
}

// ---------------------------------------------------------------- helpers

// v1Env is one scenario's target and binding.
type v1Env struct {
	tg      *v1Target
	binding a2a.TransportProtocol
}

func v1Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

func (e *v1Env) agentURL(agent string) string { return e.tg.base + "/a2a/" + agent }

// card resolves an agent's card with the SDK's default resolver (GET
// {agent URL}/.well-known/agent-card.json).
func (e *v1Env) card(t *testing.T, ctx context.Context, agent string) *a2a.AgentCard {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, e.agentURL(agent))
	if err != nil {
		t.Fatalf("resolve the %s card: %v", agent, err)
	}
	return card
}

// client is a default-factory client of the agent, bound to e.binding.
func (e *v1Env) client(t *testing.T, ctx context.Context, agent string) *a2aclient.Client {
	t.Helper()
	return e.clientFromCard(t, ctx, e.card(t, ctx, agent))
}

func (e *v1Env) clientFromCard(t *testing.T, ctx context.Context, card *a2a.AgentCard) *a2aclient.Client {
	t.Helper()
	want := v1Iface(card, e.binding)
	if want == nil {
		t.Fatalf("%s card has no %s 1.0 interface: %s", card.Name, e.binding, v1Ifaces(card))
	}
	obs := &v1Observer{}
	opts := []a2aclient.FactoryOption{a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{e.binding}}),
		a2aclient.WithCallInterceptors(obs)}
	if e.binding == a2a.TransportProtocolGRPC {
		// The gRPC transport is not in the default factory; it needs
		// credentials, here cleartext's.
		opts = append(opts, a2agrpcv1.WithGRPCTransport(gogrpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	c, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("client for %s: %v", card.Name, err)
	}
	t.Cleanup(func() {
		_ = c.Destroy()
		for _, u := range obs.urls() {
			if u != want.URL {
				t.Errorf("a call went to %s, want the %s interface %s", u, e.binding, want.URL)
			}
		}
	})
	return c
}

// v1Iface is the card's 1.0 interface of binding b.
func v1Iface(card *a2a.AgentCard, b a2a.TransportProtocol) *a2a.AgentInterface {
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == b && i.ProtocolVersion == a2a.Version {
			return i
		}
	}
	return nil
}

func v1Ifaces(card *a2a.AgentCard) string {
	var parts []string
	for _, i := range card.SupportedInterfaces {
		parts = append(parts, fmt.Sprintf("%s %s %s", i.ProtocolBinding, i.ProtocolVersion, i.URL))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// v1Observer is a passive CallInterceptor that records the interface URL
// of every call.
type v1Observer struct {
	mu   sync.Mutex
	seen []string
}

func (o *v1Observer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	o.mu.Lock()
	o.seen = append(o.seen, req.BaseURL)
	o.mu.Unlock()
	return ctx, nil, nil
}

func (o *v1Observer) After(context.Context, *a2aclient.Response) error { return nil }

func (o *v1Observer) urls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

// v1Text is a user message with one text part, optionally continuing a task
// or a context.
func v1Text(text string, taskID a2a.TaskID, contextID string) *a2a.SendMessageRequest {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.TaskID, m.ContextID = taskID, contextID
	return &a2a.SendMessageRequest{Message: m}
}

// v1Immediately makes a SendMessage return at once (returnImmediately).
func v1Immediately(req *a2a.SendMessageRequest) *a2a.SendMessageRequest {
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	return req
}

// v1SendTask calls SendMessage and requires a Task back.
func v1SendTask(t *testing.T, ctx context.Context, c *a2aclient.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want *a2a.Task", res)
	}
	if task.ID == "" || task.ContextID == "" {
		t.Fatalf("task without id or contextId: %+v", task)
	}
	return task
}

func v1TextOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

func v1StatusText(s a2a.TaskStatus) string {
	if s.Message == nil {
		return ""
	}
	return v1TextOf(s.Message.Parts)
}

func v1ArtifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		b.WriteString(v1TextOf(a.Parts))
	}
	return b.String()
}

// v1Describe renders events compactly for failure messages.
func v1Describe(evs []a2a.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch e := ev.(type) {
		case *a2a.Task:
			fmt.Fprintf(&b, "task(%s)", e.Status.State)
		case *a2a.Message:
			fmt.Fprintf(&b, "message(%s %q)", e.Role, v1TextOf(e.Parts))
		case *a2a.TaskStatusUpdateEvent:
			fmt.Fprintf(&b, "status(%s %q)", e.Status.State, v1StatusText(e.Status))
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Fprintf(&b, "artifact(append=%v last=%v %q)", e.Append, e.LastChunk, v1TextOf(e.Artifact.Parts))
		default:
			fmt.Fprintf(&b, "%T", ev)
		}
	}
	return "[" + b.String() + "]"
}

// v1WantErr checks that err matches the SDK's sentinel target.
func v1WantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, target)
		return
	}
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

// v1WaitState polls GetTask until the task is in state want.
func v1WaitState(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	t.Helper()
	return pollTask(t, ctx, string(id), want, func() (*a2a.Task, a2a.TaskState, error) {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			return nil, "", err
		}
		return task, task.Status.State, nil
	})
}

// ---------------------------------------------------------------- scenarios

// v1Card: the cards (per agent and the default one) list a JSON-RPC and a
// HTTP+JSON 1.0 interface; the default factory without preferences takes
// the first 1.0 interface in card order, with a preference the preferred one.
func v1Card(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	for _, name := range []string{"echo", "chat", "slow"} {
		card := e.card(t, ctx, name)
		if card.Name != name {
			t.Errorf("%s card: name %q", name, card.Name)
		}
		for _, b := range v1Bindings {
			i := v1Iface(card, b)
			if i == nil {
				t.Errorf("%s card: no %s 1.0 interface: %s", name, b, v1Ifaces(card))
				continue
			}
			if !strings.HasPrefix(i.URL, e.tg.base+"/") {
				t.Errorf("%s card: %s interface %s is not on the server %s", name, b, i.URL, e.tg.base)
			}
		}
		if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
			t.Errorf("%s card: capabilities %+v, want streaming and pushNotifications", name, card.Capabilities)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != name {
			t.Errorf("%s card: skills %+v", name, card.Skills)
		}
	}

	// The default card is echo's.
	def, err := agentcard.DefaultResolver.Resolve(ctx, e.tg.base)
	if err != nil {
		t.Fatalf("resolve the default card: %v", err)
	}
	if def.Name != "echo" {
		t.Errorf("default card: name %q, want echo", def.Name)
	}

	// No preference: the first 1.0 interface of the card.
	card := e.card(t, ctx, "echo")
	var first *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolVersion == a2a.Version {
			first = i
			break
		}
	}
	if first == nil {
		t.Fatalf("echo card has no 1.0 interface: %s", v1Ifaces(card))
	}
	obs := &v1Observer{}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithCallInterceptors(obs))
	if err != nil {
		t.Fatalf("default client: %v", err)
	}
	defer c.Destroy()
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
	(&v1Env{tg: e.tg, binding: first.ProtocolBinding}).wantErr(t, "GetTask of an unknown task (default client)", err, a2a.ErrTaskNotFound)
	if got := obs.urls(); len(got) != 1 || got[0] != first.URL {
		t.Errorf("default client called %v, want the first interface %s", got, first.URL)
	}

	// With the preference: that binding (checked by the client's cleanup).
	_, err = e.clientFromCard(t, ctx, card).GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
	e.wantErr(t, "GetTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// v1Send: SendMessage (blocking) to echo with a text and a data part.
func v1Send(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "echo")
	req := v1Text("hello over "+string(e.binding), "", "")
	req.Message.Parts = append(req.Message.Parts, a2a.NewDataPart(map[string]any{"k": "v", "n": 1.5}))
	task := v1SendTask(t, ctx, c, req)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s, want %s", task.Status.State, a2a.TaskStateCompleted)
	}
	if len(task.Artifacts) != 1 {
		t.Fatalf("%d artifacts, want 1: %+v", len(task.Artifacts), task.Artifacts)
	}
	art := task.Artifacts[0]
	if art.Name != "echo" || art.ID == "" || len(art.Parts) != 2 {
		t.Fatalf("artifact %+v, want echo with 2 parts", art)
	}
	if art.Parts[0].Text() != "hello over "+string(e.binding) {
		t.Errorf("artifact text %q", art.Parts[0].Text())
	}
	if d, ok := art.Parts[1].Data().(map[string]any); !ok || d["k"] != "v" || d["n"] != 1.5 {
		t.Errorf("artifact data part %#v", art.Parts[1].Data())
	}
	var found bool
	for _, m := range task.History {
		if m.ID == req.Message.ID {
			found = m.Role == a2a.MessageRoleUser && v1TextOf(m.Parts) == "hello over "+string(e.binding)
		}
	}
	if !found {
		t.Errorf("history %+v lacks the user message %s", task.History, req.Message.ID)
	}

	// A message to the completed task is refused.
	_, err := c.SendMessage(ctx, v1Text("again", task.ID, task.ContextID))
	e.wantErr(t, "SendMessage to a completed task", err, e.tg.quirks().sendTerminal)
	// A message naming an unknown task: TaskNotFound.
	_, err = c.SendMessage(ctx, v1Text("lost", "no-such-task", ""))
	e.wantErr(t, "SendMessage to an unknown task", err, a2a.ErrTaskNotFound)
}

// v1Chat: input-required turns, then "bye" completes the same task.
func v1Chat(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "chat")
	task := v1SendTask(t, ctx, c, v1Text("hello", "", ""))
	want := `turn 1: you said "hello". Say more, or "bye" to finish.`
	if task.Status.State != a2a.TaskStateInputRequired || v1StatusText(task.Status) != want {
		t.Fatalf("turn 1: %s %q, want %s %q", task.Status.State, v1StatusText(task.Status), a2a.TaskStateInputRequired, want)
	}
	if m := task.Status.Message; m.Role != a2a.MessageRoleAgent {
		t.Errorf("turn 1 status message role %q", m.Role)
	}
	t2 := v1SendTask(t, ctx, c, v1Text("how are you", task.ID, task.ContextID))
	want = `turn 2: you said "how are you". Say more, or "bye" to finish.`
	if t2.ID != task.ID || t2.ContextID != task.ContextID || t2.Status.State != a2a.TaskStateInputRequired || v1StatusText(t2.Status) != want {
		t.Fatalf("turn 2: %s/%s %s %q, want %s/%s %s %q", t2.ID, t2.ContextID, t2.Status.State, v1StatusText(t2.Status),
			task.ID, task.ContextID, a2a.TaskStateInputRequired, want)
	}
	t3 := v1SendTask(t, ctx, c, v1Text("bye", task.ID, ""))
	if t3.ID != task.ID || t3.Status.State != a2a.TaskStateCompleted || v1StatusText(t3.Status) != "Goodbye! (3 turns)" {
		t.Fatalf("bye: %s %s %q", t3.ID, t3.Status.State, v1StatusText(t3.Status))
	}
}

// v1Stream: SendStreamingMessage to echo: the Task (submitted) first, the
// artifact in 64-byte chunks (append on all but the first, lastChunk on the
// last), then the completed status-update, and the stream ends.
func v1Stream(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "echo")
	text := strings.Repeat("0123456789", 20) // 200 bytes: chunks of 64, 64, 64, 8
	evs, err := collectN(c.SendStreamingMessage(ctx, v1Text(text, "", "")), 50)
	if err != nil {
		t.Fatalf("stream: %v after %s", err, v1Describe(evs))
	}
	if len(evs) != 6 {
		t.Fatalf("events %s, want task, 4 artifact chunks, status", v1Describe(evs))
	}
	task, ok := evs[0].(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted || task.ID == "" || task.ContextID == "" {
		t.Fatalf("first event %s, want the submitted Task", v1Describe(evs[:1]))
	}
	var got strings.Builder
	var artID a2a.ArtifactID
	for i, ev := range evs[1:5] {
		a, ok := ev.(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			t.Fatalf("event %d: %s, want an artifact-update", i+1, v1Describe([]a2a.Event{ev}))
		}
		if a.TaskID != task.ID || a.ContextID != task.ContextID {
			t.Errorf("chunk %d: task %s context %s", i, a.TaskID, a.ContextID)
		}
		if a.Append != (i > 0) || a.LastChunk != (i == 3) {
			t.Errorf("chunk %d: append=%v lastChunk=%v", i, a.Append, a.LastChunk)
		}
		if i == 0 {
			artID = a.Artifact.ID
		} else if a.Artifact.ID != artID {
			t.Errorf("chunk %d: artifact id %s, want %s", i, a.Artifact.ID, artID)
		}
		got.WriteString(v1TextOf(a.Artifact.Parts))
	}
	if got.String() != text {
		t.Errorf("chunks make %q, want %q", got.String(), text)
	}
	st, ok := evs[5].(*a2a.TaskStatusUpdateEvent)
	if !ok || st.Status.State != a2a.TaskStateCompleted || st.TaskID != task.ID {
		t.Fatalf("last event %s, want the completed status-update", v1Describe(evs[5:]))
	}

	// The stored task has the whole artifact.
	stored, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if stored.Status.State != a2a.TaskStateCompleted || v1ArtifactText(stored) != text || len(stored.Artifacts) != 1 {
		t.Errorf("stored task: %s, %d artifacts, text %q", stored.Status.State, len(stored.Artifacts), v1ArtifactText(stored))
	}

	// A chat turn over the stream: the task, then input-required.
	evs, err = collectN(e.client(t, ctx, "chat").SendStreamingMessage(ctx, v1Text("streamed", "", "")), 10)
	if err != nil || len(evs) < 2 {
		t.Fatalf("chat stream: %v %s", err, v1Describe(evs))
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateInputRequired || !strings.HasPrefix(v1StatusText(last.Status), "turn 1: ") {
		t.Errorf("chat stream %s, want to end with input-required", v1Describe(evs))
	}
}

// v1Get: GetTask with and without historyLength, and of an unknown task.
func v1Get(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "chat")
	first := v1SendTask(t, ctx, c, v1Text("one", "", ""))
	v1SendTask(t, ctx, c, v1Text("two", first.ID, ""))

	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: first.ID})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if got.ID != first.ID || got.ContextID != first.ContextID || got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("GetTask: %s/%s %s", got.ID, got.ContextID, got.Status.State)
	}
	if v1StatusText(got.Status) != `turn 2: you said "two". Say more, or "bye" to finish.` {
		t.Errorf("GetTask status message %q", v1StatusText(got.Status))
	}
	var users []string
	for _, m := range got.History {
		if m.Role == a2a.MessageRoleUser {
			users = append(users, v1TextOf(m.Parts))
		}
	}
	if !slices.Equal(users, []string{"one", "two"}) {
		t.Errorf("history user messages %q, want [one two]", users)
	}
	full := len(got.History)

	one := 1
	got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: first.ID, HistoryLength: &one})
	if err != nil {
		t.Fatalf("GetTask historyLength 1: %v", err)
	}
	if len(got.History) != 1 {
		t.Errorf("historyLength 1: %d messages (full history: %d)", len(got.History), full)
	}
	zero := 0
	got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: first.ID, HistoryLength: &zero})
	if err != nil {
		t.Fatalf("GetTask historyLength 0: %v", err)
	}
	if len(got.History) != 0 {
		t.Errorf("historyLength 0: %d messages, want none", len(got.History))
	}

	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
	e.wantErr(t, "GetTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// v1List: ListTasks of one context, newest first, in pages of 2.
func v1List(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "echo")
	t1 := v1SendTask(t, ctx, c, v1Text("list 1", "", ""))
	t2 := v1SendTask(t, ctx, c, v1Text("list 2", "", t1.ContextID))
	t3 := v1SendTask(t, ctx, c, v1Text("list 3", "", t1.ContextID))
	if t2.ContextID != t1.ContextID || t3.ContextID != t1.ContextID {
		t.Fatalf("contexts %s %s %s: the server did not keep the context", t1.ContextID, t2.ContextID, t3.ContextID)
	}
	ids := func(tasks []*a2a.Task) []a2a.TaskID {
		var out []a2a.TaskID
		for _, task := range tasks {
			out = append(out, task.ID)
		}
		return out
	}

	all, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: t1.ContextID})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if want := []a2a.TaskID{t3.ID, t2.ID, t1.ID}; !slices.Equal(ids(all.Tasks), want) {
		t.Fatalf("ListTasks: %v, want newest first %v", ids(all.Tasks), want)
	}
	if all.TotalSize != 3 || all.NextPageToken != "" {
		t.Errorf("ListTasks: totalSize %d nextPageToken %q", all.TotalSize, all.NextPageToken)
	}
	for _, task := range all.Tasks {
		if task.Status.State != a2a.TaskStateCompleted || task.ContextID != t1.ContextID {
			t.Errorf("listed task %s: %s in %s", task.ID, task.Status.State, task.ContextID)
		}
		// Over gRPC no artifact and an empty list are one encoding, which
		// a2a-go decodes as an empty slice.
		if len(task.Artifacts) > 0 || task.Artifacts != nil && e.binding != a2a.TransportProtocolGRPC {
			t.Errorf("listed task %s has artifacts without includeArtifacts", task.ID)
		}
	}

	withArts, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: t1.ContextID, IncludeArtifacts: true})
	if err != nil {
		t.Fatalf("ListTasks includeArtifacts: %v", err)
	}
	for i, task := range withArts.Tasks {
		if want := fmt.Sprintf("list %d", 3-i); v1ArtifactText(task) != want {
			t.Errorf("includeArtifacts: task %d artifact %q, want %q", i, v1ArtifactText(task), want)
		}
	}

	page1, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: t1.ContextID, PageSize: 2})
	if err != nil {
		t.Fatalf("ListTasks page 1: %v", err)
	}
	if !slices.Equal(ids(page1.Tasks), []a2a.TaskID{t3.ID, t2.ID}) || page1.NextPageToken == "" || page1.TotalSize != 3 || page1.PageSize != 2 {
		t.Fatalf("page 1: %v token %q totalSize %d pageSize %d", ids(page1.Tasks), page1.NextPageToken, page1.TotalSize, page1.PageSize)
	}
	page2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: t1.ContextID, PageSize: 2, PageToken: page1.NextPageToken})
	if err != nil {
		t.Fatalf("ListTasks page 2: %v", err)
	}
	if !slices.Equal(ids(page2.Tasks), []a2a.TaskID{t1.ID}) || page2.NextPageToken != "" {
		t.Errorf("page 2: %v token %q", ids(page2.Tasks), page2.NextPageToken)
	}

	none, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: t1.ContextID, Status: a2a.TaskStateWorking})
	if err != nil {
		t.Fatalf("ListTasks status filter: %v", err)
	}
	if len(none.Tasks) != 0 {
		t.Errorf("status working: %v, want none", ids(none.Tasks))
	}
}

// v1Cancel: cancel a running slow task; cancel again; cancel a completed
// and an unknown task.
func v1Cancel(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "slow")
	task := v1SendTask(t, ctx, c, v1Immediately(v1Text("30", "", "")))
	if task.Status.State != a2a.TaskStateSubmitted && task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("returnImmediately: state %s, want submitted or working", task.Status.State)
	}
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %s %s, want %s canceled", canceled.ID, canceled.Status.State, task.ID)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask after cancel: %v %+v", err, got)
	}

	// A completed task cannot be canceled; an unknown one is not found.
	echo := e.client(t, ctx, "echo")
	done := v1SendTask(t, ctx, echo, v1Text("finished", "", ""))
	_, err = echo.CancelTask(ctx, &a2a.CancelTaskRequest{ID: done.ID})
	e.wantErr(t, "CancelTask of a completed task", err, a2a.ErrTaskNotCancelable)
	_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"})
	e.wantErr(t, "CancelTask of an unknown task", err, a2a.ErrTaskNotFound)
}

// v1Subscribe: SubscribeToTask of a running slow task starts with the Task
// snapshot and ends with completed; unknown and finished tasks are refused.
func v1Subscribe(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	c := e.client(t, ctx, "slow")
	task := v1SendTask(t, ctx, c, v1Immediately(v1Text("3", "", "")))
	evs, err := collectN(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}), 50)
	if err != nil {
		t.Fatalf("SubscribeToTask: %v after %s", err, v1Describe(evs))
	}
	if len(evs) < 3 {
		t.Fatalf("events %s, want the task, the result and the completed status", v1Describe(evs))
	}
	first, ok := evs[0].(*a2a.Task)
	if !ok || first.ID != task.ID || first.Status.State.Terminal() {
		t.Fatalf("first event %s, want the Task snapshot of %s", v1Describe(evs[:1]), task.ID)
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateCompleted || last.TaskID != task.ID {
		t.Fatalf("events %s, want to end with completed", v1Describe(evs))
	}
	art, ok := evs[len(evs)-2].(*a2a.TaskArtifactUpdateEvent)
	if !ok || art.Artifact.Name != "result" || v1TextOf(art.Artifact.Parts) != "done after 3s" || !art.LastChunk {
		t.Errorf("events %s, want the result artifact before completed", v1Describe(evs))
	}
	for _, ev := range evs[1 : len(evs)-2] {
		if st, ok := ev.(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateWorking {
			t.Errorf("events %s: between the snapshot and the result only working status-updates", v1Describe(evs))
			break
		}
	}

	evs, err = collectN(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"}), 5)
	e.wantStreamErr(t, "SubscribeToTask of an unknown task", evs, err, a2a.ErrTaskNotFound)
	evs, err = collectN(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}), 5)
	e.wantStreamErr(t, "SubscribeToTask of a completed task", evs, err, e.tg.quirks().subscribeTerminal)

	// SendStreamingMessage to the completed task fails before any event.
	evs, err = collectN(c.SendStreamingMessage(ctx, v1Text("more", task.ID, "")), 5)
	if e.binding == a2a.TransportProtocolJSONRPC && e.tg.quirks().jsonrpcStreamErrorsPlain {
		if err != nil || len(evs) != 0 {
			t.Errorf("SendStreamingMessage to a completed task: %v %s, want an empty stream", err, v1Describe(evs))
		}
	} else if err == nil || len(evs) != 0 {
		t.Errorf("SendStreamingMessage to a completed task: %v after %s, want an error first", err, v1Describe(evs))
	}
}

// v1Hook is a loopback webhook that collects push notifications.
type v1Hook struct {
	url string
	got chan v1Push
}

type v1Push struct {
	path, token, xToken, auth string
	header                    http.Header
	body                      []byte
	event                     a2a.Event // the body as a StreamResponse, if it is one
}

func v1StartHook(t *testing.T) *v1Hook {
	h := &v1Hook{got: make(chan v1Push, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p := v1Push{path: r.URL.Path, token: r.Header.Get("A2A-Notification-Token"), xToken: r.Header.Get("X-A2A-Notification-Token"),
			auth: r.Header.Get("Authorization"), header: r.Header.Clone(), body: body}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(body, &sr); err == nil {
			p.event = sr.Event
		}
		select {
		case h.got <- p:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// wait returns the first push to path that reports task id in state want.
func (h *v1Hook) wait(t *testing.T, ctx context.Context, path string, id a2a.TaskID, want a2a.TaskState) v1Push {
	t.Helper()
	for {
		select {
		case p := <-h.got:
			if p.path != path {
				continue
			}
			switch ev := p.event.(type) {
			case *a2a.Task:
				if ev.ID == id && ev.Status.State == want {
					return p
				}
			case *a2a.TaskStatusUpdateEvent:
				if ev.TaskID == id && ev.Status.State == want {
					return p
				}
			case nil:
				t.Errorf("push body is not a StreamResponse: %s", p.body)
			}
		case <-ctx.Done():
			t.Fatalf("no push to %s for task %s in state %s", path, id, want)
		}
	}
}

// v1PushConfig: create, get, list and delete a push config of a chat task
// (input-required, so it lives on), with a delivery to a loopback webhook
// when the task completes.
func v1PushConfig(t *testing.T, e *v1Env) {
	ctx := v1Ctx(t)
	q := e.tg.quirks()
	hook := v1StartHook(t)
	c := e.client(t, ctx, "chat")
	task := v1SendTask(t, ctx, c, v1Text("hello", "", ""))
	path := "/hook/" + v1BindingName(e.binding)
	in := &a2a.PushConfig{TaskID: task.ID, ID: "cfg-1", URL: hook.url + path, Token: "tok-1",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret-1"}}
	created, err := c.CreateTaskPushConfig(ctx, in)
	restPushNot200 := e.binding == a2a.TransportProtocolHTTPJSON && q.restPushCreated
	switch {
	case restPushNot200:
		v1WantErr(t, "CreateTaskPushConfig answered 201", err, a2a.ErrServerError)
	case err != nil:
		t.Fatalf("CreateTaskPushConfig: %v", err)
	}
	same := func(what string, got *a2a.PushConfig, secrets bool) {
		t.Helper()
		token, creds := in.Token, in.Auth.Credentials
		if !secrets {
			token, creds = "", ""
		}
		if got == nil || got.TaskID != in.TaskID || got.ID != in.ID || got.URL != in.URL || got.Token != token ||
			got.Auth == nil || !strings.EqualFold(got.Auth.Scheme, in.Auth.Scheme) || got.Auth.Credentials != creds {
			t.Errorf("%s: %+v (auth %+v), want %+v (auth %+v), secrets %v", what, got, authOf(got), in, in.Auth, secrets)
		}
	}
	if !restPushNot200 {
		same("created", created, true)
	}
	got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	if err != nil {
		t.Fatalf("GetTaskPushConfig: %v", err)
	}
	same("get", got, !q.pushSecretsRedacted)
	list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil {
		t.Fatalf("ListTaskPushConfigs: %v", err)
	}
	if len(list) != 1 {
		t.Fatalf("ListTaskPushConfigs: %d configs, want 1", len(list))
	}
	same("list", list[0], !q.pushSecretsRedacted)

	// The webhook hears about the task's completion.
	done := v1SendTask(t, ctx, c, v1Text("bye", task.ID, ""))
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bye: %s", done.Status.State)
	}
	p := hook.wait(t, ctx, path, task.ID, a2a.TaskStateCompleted)
	if p.auth != "Bearer secret-1" {
		t.Errorf("push Authorization %q, want Bearer secret-1", p.auth)
	}
	switch q.pushTokenHeader {
	case "either":
		if p.token != "tok-1" && p.xToken != "tok-1" {
			t.Errorf("push token headers %q / %q, want tok-1 in A2A-Notification-Token or X-A2A-Notification-Token", p.token, p.xToken)
		}
	case "":
		if p.token != "" || p.xToken != "" {
			t.Errorf("push token headers %q / %q, want none", p.token, p.xToken)
		}
	default:
		if got := p.header.Get(q.pushTokenHeader); got != "tok-1" {
			t.Errorf("push %s %q, want tok-1", q.pushTokenHeader, got)
		}
	}

	err = c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	switch {
	case restPushNot200:
		v1WantErr(t, "DeleteTaskPushConfig answered 204", err, a2a.ErrServerError)
	case err != nil:
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	_, err = c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-1"})
	e.wantErr(t, "GetTaskPushConfig of a deleted config", err, q.pushGetDeleted)
	list, err = c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(list) != 0 {
		t.Errorf("ListTaskPushConfigs after delete: %v %d configs", err, len(list))
	}
	_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: "no-such-task", URL: hook.url + path})
	e.wantErr(t, "CreateTaskPushConfig of an unknown task", err, a2a.ErrTaskNotFound)
}

func authOf(c *a2a.PushConfig) *a2a.PushAuthInfo {
	if c == nil {
		return nil
	}
	return c.Auth
}
