package gateway

import (
	"strings"
	"testing"
)

func TestOTLPSignals(t *testing.T) {
	for _, c := range []struct {
		flag            string
		env             map[string]string
		traces, metrics bool
	}{
		{"", nil, false, false},
		{"http://c:4318", nil, true, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, false, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true, false},
		{"http://c:4318", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false, true},
		{"http://c:4318", map[string]string{"OTEL_METRICS_EXPORTER": "none"}, true, false},
		{"http://c:4318", map[string]string{"OTEL_SDK_DISABLED": "true"}, false, false},
	} {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED"} {
			t.Setenv(k, c.env[k])
		}
		tr, me := telemetrySettings{otlpEndpoint: c.flag}.otlpSignals()
		if tr != c.traces || me != c.metrics {
			t.Errorf("flag %q env %v: traces %v metrics %v, want %v %v", c.flag, c.env, tr, me, c.traces, c.metrics)
		}
	}
	// The transport of each signal: the flag, else the signal's
	// variable, else the common one, else http/protobuf.
	for _, c := range []struct {
		flag            string
		env             map[string]string
		traces, metrics string
	}{
		{"", nil, "http/protobuf", "http/protobuf"},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "grpc", "grpc"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc", "grpc"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"}, "grpc", "http/protobuf"},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "grpc", "http/protobuf"},
	} {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
			t.Setenv(k, c.env[k])
		}
		cfg := telemetrySettings{otlpProtocol: c.flag, protocolFrom: "--otlp-protocol"}
		tr, _ := cfg.protocol("TRACES")
		me, _ := cfg.protocol("METRICS")
		if tr != c.traces || me != c.metrics {
			t.Errorf("flag %q env %v: traces over %s, metrics over %s; want %s, %s", c.flag, c.env, tr, me, c.traces, c.metrics)
		}
	}
	if got := orEnv("https://user:pw@c:4318/?token=x"); strings.Contains(got, "pw") || strings.Contains(got, "token") {
		t.Errorf("orEnv shows credentials: %s", got)
	}
}
