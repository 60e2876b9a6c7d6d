package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/a2abridge/a2abridge/bridge/openai/openaitest"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// otlpReceiver is an OTLP receiver built on the official OTLP protobuf
// types and their gRPC services: OTLP/HTTP (protobuf encoding, OTLP 1.x
// §"OTLP/HTTP") at URL, OTLP/gRPC at GRPCURL. It keeps the spans and the
// metric names it is sent, and which transport brought each.
type otlpReceiver struct {
	*httptest.Server
	GRPCURL string
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
	via     map[string]bool // "http", "grpc": the transports that brought spans
	bad     []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{metrics: map[string]bool{}, via: map[string]bool{}}
	r.Server = testutil.Serve(t, http.HandlerFunc(r.serve))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcTraces{r: r})
	colmetricpb.RegisterMetricsServiceServer(gs, grpcMetrics{r: r})
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	r.GRPCURL = "http://" + ln.Addr().String()
	return r
}

// grpcTraces and grpcMetrics are the receiver's OTLP/gRPC services.
type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *otlpReceiver
}

func (g grpcTraces) Export(_ context.Context, m *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.addSpans(m, "grpc")
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *otlpReceiver
}

func (g grpcMetrics) Export(_ context.Context, m *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	g.r.addMetrics(m)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

func (r *otlpReceiver) addSpans(m *coltracepb.ExportTraceServiceRequest, via string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range m.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
			if len(ss.Spans) > 0 {
				r.via[via] = true
			}
		}
	}
}

func (r *otlpReceiver) addMetrics(m *colmetricpb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range m.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				r.metrics[mt.Name] = true
			}
		}
	}
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fail := func(problem string) {
		r.mu.Lock()
		r.bad = append(r.bad, problem)
		r.mu.Unlock()
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		fail(fmt.Sprintf("%s with Content-Type %q", req.URL.Path, ct))
	}
	var resp proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			fail("traces: " + err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addSpans(&m, "http")
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var m colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			fail("metrics: " + err.Error())
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addMetrics(&m)
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	default:
		fail("unexpected path " + req.URL.Path)
		http.NotFound(w, req)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// trace returns the spans received of trace id (hex).
func (r *otlpReceiver) trace(id string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if hex.EncodeToString(s.TraceId) == id {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			switch v := a.Value.Value.(type) {
			case interface{ GetStringValue() string }:
				return v.GetStringValue()
			}
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// TestServeTelemetryOTLP: one message/stream from a caller
// that sends a W3C traceparent goes through an a2a bridge (serve A) to a
// second serve (B) whose agent is an openai backend. A exports over
// OTLP/HTTP, B over OTLP/gRPC (--otlp-protocol grpc), to a receiver built
// on the official protobuf types and gRPC services: every
// span is in the caller's trace, each hop's span is the child of the
// previous hop's, and the model endpoint got the traceparent of the last
// client span.
func TestServeTelemetryOTLP(t *testing.T) {
	rcv := newOTLPReceiver(t)
	fake := openaitest.New()
	t.Cleanup(fake.Close)
	// Short export intervals for the children (the standard variables).
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "300")
	bAddr, aAddr := freeAddr(t), freeAddr(t)
	bCfg := writeFile(t, "b.yaml", fmt.Sprintf("agents:\n  assistant:\n    kind: openai\n    base_url: %s\n    model: tiny-model\n", fake.URL))
	aCfg := writeFile(t, "a.yaml", fmt.Sprintf("agents:\n  remote:\n    kind: a2a\n    url: http://%s/a2a/assistant\ntelemetry:\n  otlp_endpoint: %s\n", bAddr, rcv.URL))
	// B exports over OTLP/gRPC, A over OTLP/HTTP.
	startChild(t, "--config", bCfg, "--memory", "--addr", bAddr, "--otlp-endpoint", rcv.GRPCURL, "--otlp-protocol", "grpc")
	startChild(t, "--config", aCfg, "--memory", "--addr", aAddr)

	const callerTrace, callerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	resp := testutil.Open(t, testutil.NewRequest(t, context.Background(), http.MethodPost, "http://"+aAddr+"/a2a/remote",
		testutil.RPCBody("message/stream", testutil.SendParams03("trace me", "otlp-1", "")),
		"Content-Type", "application/json", "Accept", "text/event-stream", "traceparent", "00-"+callerTrace+"-"+callerSpan+"-01"))
	var stream strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		stream.WriteString(sc.Text() + "\n")
	}
	resp.Body.Close()
	if !strings.Contains(stream.String(), `"state":"completed"`) || !strings.Contains(stream.String(), `" trace"`) {
		t.Fatalf("the stream did not complete with the model's answer:\n%s", stream.String())
	}

	// The spans of both processes, by name (the a2a.agent attribute tells
	// the processes apart).
	want := []string{"message/stream", "execute remote", "SendStreamingMessage", "execute assistant", "chat tiny-model", "POST openai"}
	var spans []*tracepb.Span
	var missing []string
	if !testutil.Poll(20*time.Second, func() bool {
		spans = rcv.trace(callerTrace)
		have := map[string]bool{}
		for _, s := range spans {
			have[s.Name] = true
		}
		missing = []string{}
		for _, n := range want {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		return len(missing) == 0
	}) {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		rcv.mu.Lock()
		bad := rcv.bad
		rcv.mu.Unlock()
		t.Fatalf("spans missing from the caller's trace: %v (have %v; receiver problems: %v)", missing, names, bad)
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	find := func(name, agent string) *tracepb.Span {
		t.Helper()
		for _, s := range spans {
			if s.Name == name && (agent == "" || spanAttr(s, "a2a.agent") == agent) {
				return s
			}
		}
		t.Fatalf("no span %q (agent %q)", name, agent)
		return nil
	}
	parentName := func(s *tracepb.Span) string {
		p := byID[hex.EncodeToString(s.ParentSpanId)]
		if p == nil {
			return "(" + hex.EncodeToString(s.ParentSpanId) + ")"
		}
		return p.Name
	}
	aServer := find("message/stream", "remote")
	if got := hex.EncodeToString(aServer.ParentSpanId); got != callerSpan || aServer.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("A's server span: parent %s kind %v; want the caller's span %s, server", got, aServer.Kind, callerSpan)
	}
	// A's execution, then its call of B (the client span of the a2a
	// backend), then B's server span.
	aExec := find("execute remote", "remote")
	if parentName(aExec) != "message/stream" {
		t.Errorf("A's execution span's parent is %s", parentName(aExec))
	}
	bServer := find("SendStreamingMessage", "assistant")
	hop := byID[hex.EncodeToString(bServer.ParentSpanId)]
	if hop == nil || hop.Kind != tracepb.Span_SPAN_KIND_CLIENT || spanAttr(hop, "a2abridge.backend") != "a2a" || parentName(hop) != "execute remote" {
		t.Errorf("B's server span's parent: %v; want A's a2a client span under its execution", hop)
	}
	bExec := find("execute assistant", "assistant")
	if parentName(bExec) != "SendStreamingMessage" {
		t.Errorf("B's execution span's parent is %s", parentName(bExec))
	}
	chat := find("chat tiny-model", "")
	if parentName(chat) != "execute assistant" || chat.Kind != tracepb.Span_SPAN_KIND_CLIENT || spanAttr(chat, "gen_ai.request.model") != "tiny-model" {
		t.Errorf("the model call's span: parent %s, kind %v", parentName(chat), chat.Kind)
	}
	post := find("POST openai", "")
	if parentName(post) != "chat tiny-model" {
		t.Errorf("the openai HTTP span's parent is %s", parentName(post))
	}
	// The model endpoint saw the traceparent of that span.
	last, ok := fake.LastRequest()
	if want := "00-" + callerTrace + "-" + hex.EncodeToString(post.SpanId) + "-01"; !ok || last.Header.Get("traceparent") != want {
		t.Errorf("the model endpoint got traceparent %q, want %q", last.Header.Get("traceparent"), want)
	}
	// A stream's span counts its events.
	if n := spanAttrInt(aServer, "a2a.stream.events"); n < 3 {
		t.Errorf("A's stream span counts %d events", n)
	}
	// Metrics went out too, B's model-call ones among them.
	var names string
	if !testutil.Poll(10*time.Second, func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		names = fmt.Sprint(rcv.metrics)
		return rcv.metrics["rpc.server.call.duration"] && rcv.metrics["gen_ai.client.operation.duration"] && rcv.metrics["gen_ai.client.time_to_first_token"] && rcv.metrics["http.client.request.duration"]
	}) {
		t.Fatalf("metrics received: %s", names)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bad) > 0 {
		t.Errorf("the receiver refused: %v", rcv.bad)
	}
	if !rcv.via["http"] || !rcv.via["grpc"] {
		t.Errorf("spans came over %v; want OTLP/HTTP (A) and OTLP/gRPC (B)", rcv.via)
	}
}

func spanAttrInt(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetIntValue()
		}
	}
	return -1
}

func prometheusBinary(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("prometheus"); err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatal("prometheus is not installed (apt-get install prometheus; .ci/run does)")
	}
	t.Skip("prometheus is not installed: apt-get install prometheus to run the scrape test")
	return ""
}

// promQuery runs an instant query on the Prometheus HTTP API and returns
// its vector result: the value of each series by the label by.
func promQuery(t *testing.T, base, query, by string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s", query, err, r.Error)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			out[s.Metric[by]] = f
		}
	}
	return out
}

// TestServePrometheusScrape: a real Prometheus (Debian's
// package) scrapes serve's --metrics-addr under a short load of each
// method family; its HTTP API then has the request counter of each method
// used and a p95 latency from the histogram, the README's PromQL.
func TestServePrometheusScrape(t *testing.T) {
	bin := prometheusBinary(t)
	addr, metricsAddr, promAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	startChild(t, "--memory", "--addr", addr, "--metrics-addr", metricsAddr)
	cfg := writeFile(t, "prometheus.yml", fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: a2abridge
    static_configs:
      - targets: [%q]
`, metricsAddr))
	var logs testutil.Buffer
	prom := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(t.TempDir(), "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom.Stdout, prom.Stderr = &logs, &logs
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prom.Process.Kill(); _ = prom.Wait() })

	base := "http://" + addr + "/a2a/echo"
	post := func(version, body string) {
		t.Helper()
		var hdr []string
		if version != "" {
			hdr = []string{"A2A-Version", version}
		}
		testutil.Post(t, base, body, hdr...)
	}
	promURL := "http://" + promAddr
	// Prometheus answers its API once it is ready (503 before).
	if !testutil.Poll(30*time.Second, func() bool {
		resp, err := http.Get(promURL + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("Prometheus did not get ready: %s", logs.String())
	}
	used := map[string]bool{"message/send": true, "tasks/get": true, "message/stream": true, "SendMessage": true, "GetTask": true}
	var counts, p95 map[string]float64
	i := 0
	if !testutil.Poll(60*time.Second, func() bool {
		// The load goes on until Prometheus has seen it all (a scrape
		// every second).
		post("", testutil.RPCBody("message/send", testutil.SendParams03("hi", fmt.Sprintf("p%d", i), "")))
		post("", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"nope"}}`)
		post("", testutil.RPCBody("message/stream", testutil.SendParams03("hi", fmt.Sprintf("s%d", i), "")))
		post("1.0", fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"q%d","parts":[{"text":"hi"}]}}}`, i))
		req := testutil.NewRequest(t, context.Background(), http.MethodGet, base+"/tasks/nope", "", "A2A-Version", "1.0")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		i++
		counts = promQuery(t, promURL, `sum by (rpc_method) (rpc_server_call_duration_seconds_count{job="a2abridge"})`, "rpc_method")
		p95 = promQuery(t, promURL, `histogram_quantile(0.95, sum by (le, rpc_method) (rate(rpc_server_call_duration_seconds_bucket{job="a2abridge"}[30s])))`, "rpc_method")
		done := counts != nil
		for m := range used {
			if counts[m] < 2 || !(p95[m] > 0 && p95[m] < 10) {
				done = false
			}
		}
		return done
	}) {
		t.Fatalf("Prometheus did not show every method used (%v): counts %v, p95 %v\nprometheus: %s", used, counts, p95, logs.String())
	}
	t.Logf("Prometheus: requests %v; p95 latency (s) %v", counts, p95)
	// Errors are told apart by outcome and code.
	errs := promQuery(t, promURL, `sum by (rpc_method) (rpc_server_call_duration_seconds_count{a2a_outcome="error",rpc_response_status_code="-32001"})`, "rpc_method")
	if errs["tasks/get"] < 2 || errs["GetTask"] < 2 || errs["message/send"] != 0 {
		t.Errorf("TaskNotFound errors by method: %v", errs)
	}
	// Tasks by state, as the store counts them (a count is reused for
	// 15 s: the first scrapes may predate the load).
	var tasks map[string]float64
	if !testutil.Poll(40*time.Second, func() bool {
		tasks = promQuery(t, promURL, `sum by (a2a_task_state) (a2abridge_tasks{job="a2abridge",a2a_agent="echo"})`, "a2a_task_state")
		return tasks["completed"] >= 2
	}) {
		t.Fatalf("a2abridge_tasks by state: %v, want completed echo tasks", tasks)
	}
	t.Logf("Prometheus: tasks by state %v", tasks)
}

// TestServeTelemetryErrors: a telemetry setting that cannot work is a
// startup error naming the flag, key or variable.
func TestServeTelemetryErrors(t *testing.T) {
	cfg := writeFile(t, "t.yaml", "telemetry:\n  otlp_endpoint: collector:4318\n")
	bad := writeFile(t, "bad.yaml", "telemetry:\n  otlp: http://x\n")
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--otlp-endpoint", "collector:4318"}, "", `--otlp-endpoint "collector:4318": want the base URL of an OTLP receiver`},
		{[]string{"--otlp-endpoint", "ftp://c:4318"}, "", "--otlp-endpoint"},
		{[]string{"--otlp-endpoint", "http://c:4318/?x=1"}, "", "--otlp-endpoint"},
		{[]string{"--config", cfg}, "", `--config: telemetry.otlp_endpoint "collector:4318"`},
		{[]string{"--config", bad}, "", `unknown key "otlp"`},
		{[]string{"--metrics-addr", "9464"}, "", `--metrics-addr "9464": want HOST:PORT`},
		{[]string{"--otlp-endpoint", "http://u:pw@c:4318"}, "", `--otlp-endpoint "http://c:4318": want the base URL`},
		{[]string{"--otlp-endpoint", "http://127.0.0.1:4318"}, "http/json", `OTEL_EXPORTER_OTLP_PROTOCOL "http/json": want http/protobuf or grpc`},
		{[]string{"--otlp-endpoint", "http://127.0.0.1:4317", "--otlp-protocol", "grpc2"}, "", `--otlp-protocol "grpc2": want http/protobuf or grpc`},
		{[]string{"--otlp-endpoint", "http://127.0.0.1:4317/v1", "--otlp-protocol", "grpc"}, "", `--otlp-endpoint "http://127.0.0.1:4317/v1": want the base URL`},
		{[]string{"--otlp-endpoint", "http://127.0.0.1:4317/v1"}, "grpc", `--otlp-endpoint "http://127.0.0.1:4317/v1": want the base URL`},
	} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.env)
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--memory"}, c.args...), nil, &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), ExitUsage, c.want)
		}
	}
}

// TestServeMetricsOnMain: --metrics serves GET /metrics on the main
// listener, in the Prometheus text format, with the requests made.
func TestServeMetricsOnMain(t *testing.T) {
	base := startServe(t, "--metrics")
	testutil.RPC(t, base+"/a2a/echo", "tasks/get", `{"id":"nope"}`)
	resp, b := testutil.Get(t, base+"/metrics")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(b), `rpc_server_call_duration_seconds_count{a2a_agent="echo",a2a_binding="JSONRPC",a2a_outcome="error",a2a_protocol_version="0.3"`) ||
		!strings.Contains(string(b), `rpc_method="tasks/get",rpc_response_status_code="-32001"`) {
		t.Fatalf("GET /metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// Without the flag there is no such route.
	off := startServe(t)
	if resp, _ := testutil.Get(t, off+"/metrics"); resp.StatusCode == http.StatusOK {
		t.Error("GET /metrics answered without --metrics")
	}
}

// TestOTLPSignals: which signals serve exports over OTLP, by flag and
// by the standard environment.
