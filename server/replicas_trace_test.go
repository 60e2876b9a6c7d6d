package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/server"
)

// TestReplicaTraceContext: the trace context of the request
// that started a task's execution on replica A is kept with the task, so
// that what another replica does for the task joins or links that trace:
// a tasks/get answered by B for a caller with a trace of its own links
// to it; a tasks/cancel answered by B whose caller sent no traceparent
// joins it; and the push notifications B delivers after A stopped (A's
// own attempts never reached the webhook) are children of that request's
// span, their traceparent sent to the webhook in its trace.
func TestReplicaTraceContext(t *testing.T) { forClusters(t, testReplicaTraceContext) }

func testReplicaTraceContext(t *testing.T, c cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())

	var mu sync.Mutex
	var got []string // "state traceparent"
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var task struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		_ = json.Unmarshal(b, &task)
		mu.Lock()
		got = append(got, task.Status.State+" "+r.Header.Get("traceparent"))
		mu.Unlock()
	}))
	defer hook.Close()

	steps := stepAgent{make(chan string)}
	a := startReplica(t, ctx, c, steps, server.EngineOptions{LeaseTime: time.Second, Push: unreachablePush, TracerProvider: tp})
	b := startReplica(t, ctx, c, steps, server.EngineOptions{LeaseTime: time.Second, Push: fastRetries, TracerProvider: tp})
	bHost := server.NewHost(server.HostOptions{Default: "steps"})
	bHost.Add(b.h)
	bSrv := httptest.NewServer(bHost)
	defer bSrv.Close()

	callerCtx, caller := tp.Tracer("test").Start(ctx, "caller")
	want := caller.SpanContext()
	blocking := false
	task, err := a.h.SendMessageForTask(callerCtx, a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("go")),
		Configuration: &a2a.SendMessageConfiguration{Blocking: &blocking, PushNotificationConfig: &a2a.PushNotificationConfig{ID: "c1", URL: hook.URL}}})
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	steps.steps <- "s1"
	visible(t, ctx, b.h, task.ID, a2a.TaskStateWorking)

	// tasks/get on B from a caller with a trace of its own: the span
	// stays in the caller's trace and links to the execution's.
	post := func(body string, traceparent string) string {
		t.Helper()
		var hdr []string
		if traceparent != "" {
			hdr = []string{"traceparent", traceparent}
		}
		_, answer := testutil.Post(t, bSrv.URL, body, hdr...)
		return string(answer)
	}
	endedSpan := func(name string) sdktrace.ReadOnlySpan {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			for _, s := range rec.Ended() {
				if s.Name() == name {
					return s
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s span", name)
			}
		}
	}
	if answer := post(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+task.ID+`"}}`,
		"00-"+callerTrace+"-"+callerSpan+"-01"); !strings.Contains(answer, `"working"`) {
		t.Fatalf("tasks/get on B: %s", answer)
	}
	get := endedSpan("tasks/get")
	if get.SpanContext().TraceID().String() != callerTrace || get.Parent().SpanID().String() != callerSpan {
		t.Fatalf("tasks/get with a traceparent: span in trace %s, parent %s; want its caller's", get.SpanContext().TraceID(), get.Parent().SpanID())
	}
	linked := false
	for _, l := range get.Links() {
		linked = linked || (l.SpanContext.TraceID() == want.TraceID() && l.SpanContext.SpanID() == want.SpanID())
	}
	if !linked {
		t.Fatalf("tasks/get on B: links %+v, want one to the span that started the execution (%s/%s)", get.Links(), want.TraceID(), want.SpanID())
	}

	// tasks/cancel on B, its caller without trace context: it joins the
	// trace of the execution it stops (running on A).
	if answer := post(`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"`+task.ID+`"}}`, ""); !strings.Contains(answer, `"canceled"`) {
		t.Fatalf("tasks/cancel on B: %s", answer)
	}
	cancelSpan := endedSpan("tasks/cancel")
	if cancelSpan.SpanContext().TraceID() != want.TraceID() || cancelSpan.Parent().SpanID() != want.SpanID() {
		t.Fatalf("tasks/cancel without a traceparent: span in trace %s, parent %s; want the execution's trace %s, parent %s",
			cancelSpan.SpanContext().TraceID(), cancelSpan.Parent().SpanID(), want.TraceID(), want.SpanID())
	}

	// A stops: B takes its deliveries over and sends them in the trace
	// of the request that started the task.
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if err := a.eng.Close(cctx); err != nil {
		t.Fatal(err)
	}
	wantTP := "00-" + want.TraceID().String() + "-"
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		done := len(got) > 0 && strings.HasPrefix(got[len(got)-1], "canceled ")
		seen := append([]string{}, got...)
		mu.Unlock()
		if done {
			for _, d := range seen {
				if _, tpv, _ := strings.Cut(d, " "); !strings.HasPrefix(tpv, wantTP) {
					t.Errorf("notification %q: not in the trace %s of the request that started the task", d, want.TraceID())
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %q: no canceled", seen)
		}
	}
	n := 0
	for _, s := range rec.Ended() {
		if s.Name() != "push notification" || s.SpanKind() != trace.SpanKindClient || s.Status().Code.String() == "Error" {
			continue
		}
		n++
		if s.Parent().SpanID() != want.SpanID() || s.SpanContext().TraceID() != want.TraceID() {
			t.Errorf("a push span of B has parent %s in trace %s, want the request's span %s in %s",
				s.Parent().SpanID(), s.SpanContext().TraceID(), want.SpanID(), want.TraceID())
		}
	}
	if n == 0 {
		t.Fatal("no delivered push notification span")
	}
}
