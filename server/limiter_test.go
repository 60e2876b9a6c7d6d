package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// refuseAll is a Limiter that refuses every request, asking for 2.5 s.
type refuseAll struct{ calls atomic.Int64 }

func (l *refuseAll) Allow(*http.Request, *auth.Principal) (time.Duration, bool) {
	l.calls.Add(1)
	return 2500 * time.Millisecond, false
}

// TestLimiterRefusesOnEveryBinding: a request a Limiter refuses gets
// HTTP 429, Retry-After rounded up to whole seconds and -32029 on every
// interface (A2A 0.3 and 1.0, JSON-RPC and HTTP+JSON), gRPC
// RESOURCE_EXHAUSTED with reason RATE_LIMITED; the agent never runs and
// nothing is stored.
func TestLimiterRefusesOnEveryBinding(t *testing.T) {
	var ran atomic.Int64
	agent := server.AgentFunc(func(ctx context.Context, r *server.Request, u *server.TaskUpdater) error {
		ran.Add(1)
		return u.Complete(ctx, "done")
	})
	lim := &refuseAll{}
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("a")
	host.Add(server.NewHandler(eng, "a", agent, testutil.Card("a"), server.HandlerOptions{Limiter: lim}))
	addr, conn := grpcHost(t, host, eng)
	u := "http://" + addr + "/a2a/a"

	// The raw answers: status, header and code, whatever the body.
	for _, c := range []struct {
		name, method, path, body string
		hdr                      []string
	}{
		{"JSON-RPC 0.3", http.MethodPost, "", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":` + testutil.SendParams03("hi", "m1", "") + `}`, []string{"Content-Type", "application/json"}},
		{"JSON-RPC 1.0", http.MethodPost, "", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{}}`, []string{"Content-Type", "application/json", "A2A-Version", "1.0"}},
		{"HTTP+JSON 1.0", http.MethodPost, "/message:send", `{}`, []string{"Content-Type", "application/json", "A2A-Version", "1.0"}},
		{"HTTP+JSON 0.3", http.MethodGet, "/v1/tasks/t1", "", nil},
		{"card", http.MethodGet, "/.well-known/agent-card.json", "", nil},
	} {
		resp, b := testutil.Do(t, testutil.NewRequest(t, context.Background(), c.method, u+c.path, c.body, c.hdr...))
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "3" {
			t.Errorf("%s: %d Retry-After %q %s", c.name, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
		if !strings.Contains(string(b), "-32029") && !strings.Contains(string(b), "RATE_LIMITED") {
			t.Errorf("%s: body %s names neither -32029 nor RATE_LIMITED", c.name, b)
		}
	}
	// gRPC: RESOURCE_EXHAUSTED, the ErrorInfo's reason RATE_LIMITED.
	p := testutil.UserMessage("hi", "")
	p.Tenant = "a"
	req, _ := pb.AppendSendMessageRequest(nil, &p)
	_, err := grpcCall(context.Background(), conn, "SendMessage", req)
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || !strings.Contains(fmt.Sprint(st.Details()), "RATE_LIMITED") {
		t.Fatalf("gRPC: %v %v, want RESOURCE_EXHAUSTED with RATE_LIMITED", err, st.Details())
	}
	if ran.Load() != 0 {
		t.Fatalf("the agent ran %d times", ran.Load())
	}
	if lim.calls.Load() < 6 {
		t.Fatalf("the Limiter was asked %d times, want once per request (6)", lim.calls.Load())
	}
}

// TestRespondCannotClaimRateLimited: -32029 says a request was refused
// unread, and clients repeat it; an agent's Respond that returns it ran,
// so the client gets -32603 instead.
func TestRespondCannotClaimRateLimited(t *testing.T) {
	var calls atomic.Int64
	agent := server.MessageFunc(func(ctx context.Context, r *server.Request) (*a2a.Message, error) {
		calls.Add(1)
		return nil, a2a.ErrRateLimited.WithData(map[string]any{"retryAfterSeconds": "1"})
	})
	eng := servertest.Engine(t, server.EngineOptions{})
	host := servertest.Host("a")
	host.Add(server.NewHandler(eng, "a", agent, testutil.Card("a"), server.HandlerOptions{}))
	ts := testutil.Serve(t, host, eng.Close)
	resp, b := testutil.Post(t, ts.URL+"/a2a/a", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":`+testutil.SendParams03("hi", "m1", "")+`}`)
	if resp.StatusCode == http.StatusTooManyRequests || !strings.Contains(string(b), "-32603") || calls.Load() != 1 {
		t.Fatalf("%d %s (Respond ran %d times)", resp.StatusCode, b, calls.Load())
	}
}

// TestLimiterMetric: each refused request counts in
// a2abridge.limits.refused, by agent and reason.
func TestLimiterMetric(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	eng, err := server.NewEngine(context.Background(), memory.New(), server.EngineOptions{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	host := servertest.Host("a")
	host.Add(server.NewHandler(eng, "a", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{Limiter: &refuseAll{}}))
	ts := testutil.Serve(t, host, eng.Close)
	testutil.Post(t, ts.URL+"/a2a/a", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":`+testutil.SendParams03("hi", "m1", "")+`}`)
	testutil.Get(t, ts.URL+"/a2a/a/.well-known/agent-card.json")
	rm := collectMetrics(t, reader)
	m, ok := findMetric(rm, "a2abridge.limits.refused")
	if !ok {
		t.Fatal("no a2abridge.limits.refused")
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		agent, _ := dp.Attributes.Value("a2a.agent")
		reason, _ := dp.Attributes.Value("a2abridge.limit.reason")
		if agent.AsString() != "a" || reason.AsString() != "rate" || dp.Value != 2 {
			t.Fatalf("a2abridge.limits.refused: %v = %d, want a2a.agent=a, reason=rate: 2", dp.Attributes.ToSlice(), dp.Value)
		}
	}
}
