package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// telemetrySettings is what serve's flags and config file say of
// telemetry: an OTLP endpoint (OTLP/HTTP or gRPC) for traces and
// metrics, and where to serve Prometheus metrics.
type telemetrySettings struct {
	otlpEndpoint string // base URL ("" : the OTEL_EXPORTER_OTLP_* environment, if any)
	otlpFrom     string // the flag or key it came from, for errors
	otlpProtocol string // "http/protobuf", "grpc" ("": the environment's, else http/protobuf)
	protocolFrom string
	metricsAddr  string // host:port of a separate /metrics listener
	metricsFrom  string
	metricsMain  bool // GET /metrics on the main listener too
}

// otlpEnvSet reports whether the environment configures an OTLP
// endpoint for serve (the standard OTEL_EXPORTER_OTLP_* variables), for
// traces and for metrics.
func otlpEnvSet() (traces, metrics bool) {
	common := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	return common || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", common || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// otlpSignals reports which signals serve exports over OTLP: those of
// an endpoint (c's, or the environment's), unless OTEL_SDK_DISABLED=true
// or OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER is "none".
func (c telemetrySettings) otlpSignals() (traces, metrics bool) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, false
	}
	traces, metrics = otlpEnvSet()
	if c.otlpEndpoint != "" {
		traces, metrics = true, true
	}
	if strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		traces = false
	}
	if strings.EqualFold(os.Getenv("OTEL_METRICS_EXPORTER"), "none") {
		metrics = false
	}
	return traces, metrics
}

// OTLP transports (OTEL_EXPORTER_OTLP_PROTOCOL's values that serve
// exports with).
const (
	otlpHTTP = "http/protobuf"
	otlpGRPC = "grpc"
)

// protocol is the OTLP transport of signal ("TRACES" or "METRICS"): c's
// (--otlp-protocol or telemetry.otlp_protocol), else
// OTEL_EXPORTER_OTLP_{signal}_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf (the OpenTelemetry default); from names where it
// came from, for errors.
func (c telemetrySettings) protocol(signal string) (proto, from string) {
	if c.otlpProtocol != "" {
		return c.otlpProtocol, c.protocolFrom
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(k); v != "" {
			return v, k
		}
	}
	return otlpHTTP, ""
}

// check validates c at startup: an error names the flag, key or
// environment variable.
func (c telemetrySettings) check() error {
	traces, metrics := c.otlpSignals()
	grpc := false
	for _, s := range []struct {
		signal string
		on     bool
	}{{"TRACES", traces}, {"METRICS", metrics}} {
		proto, from := c.protocol(s.signal)
		switch {
		case !s.on && c.otlpProtocol == "": // the variable of a signal not exported is not checked
		case proto == otlpGRPC:
			grpc = true
		case proto != otlpHTTP:
			return fmt.Errorf("%s %q: want %s or %s (OTLP over HTTP with JSON is not supported)", from, proto, otlpHTTP, otlpGRPC)
		}
	}
	if c.otlpEndpoint != "" {
		u, err := url.Parse(c.otlpEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
			(grpc && u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%s %q: want the base URL of an OTLP receiver, http(s)://HOST:PORT (the collector's port 4318 for OTLP/HTTP, where /v1/traces and /v1/metrics are appended; 4317 for gRPC, without a path; https for TLS; credentials go in OTEL_EXPORTER_OTLP_HEADERS, not the URL)", c.otlpFrom, redactedURL(c.otlpEndpoint))
		}
	}
	if c.metricsAddr != "" {
		if _, _, err := splitHostPortLoose(c.metricsAddr); err != nil {
			return fmt.Errorf("%s %q: want HOST:PORT (port 0 picks a free port)", c.metricsFrom, c.metricsAddr)
		}
	}
	return nil
}

func splitHostPortLoose(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || addr[i+1:] == "" {
		return "", "", errors.New("no port")
	}
	return addr[:i], addr[i+1:], nil
}

// telemetry is serve's running telemetry: the providers the engine
// gets, the Prometheus handler, and the exporters to flush at exit.
type telemetry struct {
	tp      trace.TracerProvider // nil: no traces
	mp      metric.MeterProvider // nil: no metrics
	metrics http.Handler         // GET /metrics; nil: not served
	stop    []func(context.Context) error
}

// on reports whether any telemetry is on.
func (t *telemetry) on() bool { return t.tp != nil || t.mp != nil }

// shutdown flushes and stops the exporters (within ctx).
func (t *telemetry) shutdown(ctx context.Context) error {
	var errs []error
	for i := len(t.stop) - 1; i >= 0; i-- {
		errs = append(errs, t.stop[i](ctx))
	}
	return errors.Join(errs...)
}

// startTelemetry builds the providers of c: OTLP traces and metrics
// (metrics every OTEL_METRIC_EXPORT_INTERVAL, by default 60 s) when an
// endpoint is set by c or the environment, and a Prometheus registry
// when metrics are served. OTEL_SDK_DISABLED=true turns OTLP export off;
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the resource
// (service.name a2abridge by default).
func startTelemetry(ctx context.Context, c telemetrySettings) (*telemetry, error) {
	t := &telemetry{}
	otlpTraces, otlpMetrics := c.otlpSignals()
	prom := c.metricsAddr != "" || c.metricsMain
	if !otlpTraces && !otlpMetrics && !prom {
		return t, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "a2abridge"), attribute.String("service.version", mainVersion())),
		resource.WithFromEnv(), resource.WithHost(), resource.WithProcessPID())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	var readers []sdkmetric.Option
	if otlpTraces {
		te, err := c.traceExporter(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: traces exporter: %w", c.otlpFrom, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(te), sdktrace.WithResource(res))
		t.tp = tp
		t.stop = append(t.stop, tp.Shutdown)
	}
	if otlpMetrics {
		me, err := c.metricExporter(ctx)
		if err != nil {
			_ = t.shutdown(ctx)
			return nil, fmt.Errorf("%s: metrics exporter: %w", c.otlpFrom, err)
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)))
	}
	if prom {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		pe, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			_ = t.shutdown(ctx)
			return nil, fmt.Errorf("prometheus exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(pe))
		t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil, Timeout: 10 * time.Second})
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		t.mp = mp
		t.stop = append(t.stop, mp.Shutdown)
	}
	return t, nil
}

// traceExporter is the OTLP exporter of spans, over the transport of
// c.protocol: to c's endpoint (OTLP/HTTP: its /v1/traces), else where
// the environment says.
func (c telemetrySettings) traceExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if proto, _ := c.protocol("TRACES"); proto == otlpGRPC {
		var opts []otlptracegrpc.Option
		if c.otlpEndpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.otlpEndpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if c.otlpEndpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(c.otlpEndpoint, "/")+"/v1/traces"))
	}
	return otlptracehttp.New(ctx, opts...)
}

// metricExporter is traceExporter for metrics (OTLP/HTTP: /v1/metrics).
func (c telemetrySettings) metricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	if proto, _ := c.protocol("METRICS"); proto == otlpGRPC {
		var opts []otlpmetricgrpc.Option
		if c.otlpEndpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(c.otlpEndpoint))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	var opts []otlpmetrichttp.Option
	if c.otlpEndpoint != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(strings.TrimRight(c.otlpEndpoint, "/")+"/v1/metrics"))
	}
	return otlpmetrichttp.New(ctx, opts...)
}

// orEnv names an OTLP endpoint for the log: the URL given, or where the
// environment sets it (without user info or query: no credentials).
func orEnv(endpoint string) string {
	if endpoint != "" {
		return redactedURL(endpoint)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if v := os.Getenv(k); v != "" {
			return k + "=" + redactedURL(v)
		}
	}
	return "(environment)"
}

// redactedURL is s without its user info and query ("(invalid URL)"
// when it does not parse).
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// modulePath is the path of the a2abridge module.
const modulePath = "github.com/a2abridge/a2abridge"

// mainVersion is the a2abridge module's version (service.version), as the
// build recorded it: the main module's when a2abridge is the program,
// else that of the dependency the embedding program built in;
// "(unknown)" when the build did not record it.
func mainVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath && d.Version != "" {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "(unknown)"
}
