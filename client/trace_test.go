package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// TestTraceContextSent: a call made in a context that carries an
// OpenTelemetry span sends its W3C traceparent (the agent continues the
// caller's trace); one without sends none.
func TestTraceContextSent(t *testing.T) {
	t.Parallel()
	real := newServer(t)
	var mu sync.Mutex
	var got []string
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
		testutil.Forward(w, r, real.URL+"/a2a/echo")
	}))
	defer spy.Close()
	card, _ := client.Resolve(context.Background(), real.URL, client.Options{})
	card = retarget(card, real.URL+"/a2a/echo", spy.URL)
	c, err := client.New(card, client.Options{Protocol: a2a.Version03})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(context.Background(), text("untraced")); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "caller")
	defer span.End()
	if _, err := c.SendMessage(ctx, text("traced")); err != nil {
		t.Fatal(err)
	}
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "" || got[1] != want {
		t.Fatalf("traceparent sent: %q, want none then %q", got, want)
	}
}
