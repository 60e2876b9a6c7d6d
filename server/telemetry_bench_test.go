package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/a2abridge/a2abridge/internal/testutil/servertest"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store/memory"
)

// BenchmarkSendTelemetry measures message/send round trips (memory store,
// echo) with telemetry off, metrics only (two readers, as serve with OTLP
// and Prometheus), and metrics with traces exported over OTLP/HTTP to a
// sink, every request sampled or a tenth of them. Compare side by side:
//
//	go test -run '^$' -bench SendTelemetry -benchmem ./server
func BenchmarkSendTelemetry(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, v := range []struct {
		name    string
		metrics bool
		sampler sdktrace.Sampler // nil: no traces
	}{
		{"off", false, nil},
		{"metrics", true, nil},
		{"traces10", true, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))},
		{"traces100", true, sdktrace.ParentBased(sdktrace.AlwaysSample())},
	} {
		b.Run(v.name, func(b *testing.B) {
			o := server.EngineOptions{Logger: testutil.Logger()}
			if v.metrics {
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer mp.Shutdown(context.Background())
				o.MeterProvider = mp
			}
			if v.sampler != nil {
				exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL+"/v1/traces"))
				if err != nil {
					b.Fatal(err)
				}
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithSampler(v.sampler))
				defer tp.Shutdown(context.Background())
				o.TracerProvider = tp
			}
			eng, err := server.NewEngine(context.Background(), memory.New(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close(context.Background())
			host := servertest.Host("echo", server.NewHandler(eng, "echo", agents.Echo{}, agents.Echo{}.Card(), server.HandlerOptions{}))
			ts := httptest.NewServer(host)
			defer ts.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(16) // 32 clients on 2 cores, as the bench harness
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"b-%d","parts":[{"kind":"text","text":"hello"}]}}}`, i, i)
					resp, err := client.Post(ts.URL+"/", "application/json", bytes.NewReader([]byte(body)))
					if err != nil {
						b.Error(err)
						return
					}
					out, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !bytes.Contains(out, []byte(`"state":"completed"`)) {
						b.Errorf("unexpected response %s", out)
						return
					}
				}
			})
		})
	}
}
