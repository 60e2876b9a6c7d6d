package check

import (
	"strings"
	"testing"
	"time"
)

// only10Card makes the served card a 1.0-only card: no 0.3 members, no
// 0.3 interface.
func only10Card(_ string, m map[string]any) map[string]any {
	for _, k := range members03 {
		delete(m, k)
	}
	var ifs []any
	for _, x := range m["supportedInterfaces"].([]any) {
		if x.(map[string]any)["protocolVersion"] != "0.3" {
			ifs = append(ifs, x)
		}
	}
	m["supportedInterfaces"] = ifs
	return m
}

// TestSuites: the card decides which suites run, and --protocol and
// --binding narrow them; the report lists and scores the interfaces.
func TestSuites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		card       func(string, map[string]any) map[string]any
		opts       Options
		protocol   string
		categories []string // the categories that ran, in order
		ifaces     []string // Name: checked or the reason it was not
	}{
		{name: "union", protocol: "0.3.0 and 1.0",
			categories: []string{"card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema", "card10", "rpc10", "rest10", "rest03"},
			ifaces:     []string{"A2A 1.0 JSON-RPC: checked", "A2A 1.0 HTTP+JSON: checked", "A2A 0.3 JSON-RPC: checked", "A2A 0.3 HTTP+JSON: checked"}},
		{name: "1.0 only", card: only10Card, protocol: "1.0",
			categories: []string{"card10", "rpc10", "rest10"},
			ifaces:     []string{"A2A 1.0 JSON-RPC: checked", "A2A 1.0 HTTP+JSON: checked"}},
		{name: "0.3 only", card: func(_ string, m map[string]any) map[string]any { delete(m, "supportedInterfaces"); return m }, protocol: "0.3.0",
			categories: []string{"card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema", "rest03"},
			ifaces:     []string{"A2A 0.3 JSON-RPC: checked", "A2A 0.3 HTTP+JSON: checked"}},
		{name: "--protocol 1.0 --binding rest", opts: Options{Protocol: "1.0", Binding: BindingREST}, protocol: "1.0",
			categories: []string{"card10", "rest10"},
			ifaces: []string{"A2A 1.0 JSON-RPC: left out by --protocol or --binding", "A2A 1.0 HTTP+JSON: checked",
				"A2A 0.3 JSON-RPC: left out by --protocol or --binding", "A2A 0.3 HTTP+JSON: left out by --protocol or --binding"}},
		{name: "gRPC declared", protocol: "0.3.0 and 1.0",
			card: func(_ string, m map[string]any) map[string]any {
				m["supportedInterfaces"] = append(m["supportedInterfaces"].([]any),
					map[string]any{"url": "grpc://127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"})
				return m
			},
			// A url with a scheme is no gRPC target: the suite is skipped.
			categories: []string{"card", "rpc", "message", "parts", "tasks", "stream", "state", "push", "auth", "schema", "card10", "rpc10", "rest10", "grpc10", "rest03"},
			ifaces: []string{"A2A 1.0 JSON-RPC: checked", "A2A 1.0 HTTP+JSON: checked", "A2A 0.3 JSON-RPC: checked", "A2A 0.3 HTTP+JSON: checked",
				"A2A 1.0 gRPC: checked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f *fault
			if tt.card != nil {
				f = &fault{card: tt.card}
			}
			o := tt.opts
			o.URL = serve(t, faulty(newHost(t, hostOpts{}), f)) + "/a2a/echo"
			o.Timeout = 5 * time.Second
			rep, err := Run(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			var cats []string
			for _, c := range rep.Categories {
				cats = append(cats, c.Name)
			}
			if strings.Join(cats, " ") != strings.Join(tt.categories, " ") {
				t.Errorf("categories %v, want %v", cats, tt.categories)
			}
			if rep.Protocol != tt.protocol {
				t.Errorf("protocol %q, want %q", rep.Protocol, tt.protocol)
			}
			var ifs []string
			for _, i := range rep.Interfaces {
				what := "checked"
				if !i.Checked {
					what = i.NotChecked
				} else if i.Score != 100 || i.Counts.Pass == 0 {
					t.Errorf("%s: score %.1f, %+v", i.Name, i.Score, i.Counts)
				}
				ifs = append(ifs, i.Name+": "+what)
			}
			if strings.Join(ifs, "\n") != strings.Join(tt.ifaces, "\n") {
				t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(ifs, "\n"), strings.Join(tt.ifaces, "\n"))
			}
			for _, r := range rep.Results {
				if r.Status == Fail {
					t.Errorf("%s failed: %s", r.ID, r.Message)
				}
			}
		})
	}
}

// TestInterfaceScore: an interface's score counts its own checks and its
// version's card checks, not the other binding's.
func TestInterfaceScore(t *testing.T) {
	rep := &Report{
		Results: []CheckResult{
			{ID: "card10.schema", Version: "1.0", Level: Must, Status: Fail},
			{ID: "rpc10.send", Version: "1.0", Binding: BindingJSONRPC, Level: Must, Status: Pass},
			{ID: "rest10.send", Version: "1.0", Binding: BindingREST, Level: Should, Status: Fail},
			{ID: "card.fetch", Version: "0.3", Binding: BindingJSONRPC, Level: Must, Status: Pass},
		},
		Interfaces: []InterfaceReport{
			{Interface: Interface{Version: "1.0", Binding: BindingJSONRPC}, Checked: true},
			{Interface: Interface{Version: "1.0", Binding: BindingREST}, Checked: true},
			{Interface: Interface{Version: "0.3", Binding: BindingJSONRPC}, Checked: true},
			{Interface: Interface{Version: "0.3", Binding: BindingREST}, NotChecked: "no"},
		},
	}
	rep.summarize()
	want := []struct {
		score      float64
		pass, fail int
	}{{50, 1, 1}, {0, 0, 2}, {100, 1, 0}, {0, 0, 0}}
	for i, w := range want {
		got := rep.Interfaces[i]
		if got.Score != w.score || got.Counts.Pass != w.pass || got.Counts.Fail != w.fail {
			t.Errorf("%s: score %.1f, %+v; want %.1f, %d pass, %d fail", got.Interface.Suite(), got.Score, got.Counts, w.score, w.pass, w.fail)
		}
	}
	if rep.Score != 54.5 { // 6 of 11
		t.Errorf("overall score %.1f", rep.Score)
	}
}

func TestValidateSuite(t *testing.T) {
	for _, tt := range []struct{ protocol, binding, want string }{
		{"", "", ""}, {"0.3", "jsonrpc", ""}, {"1.0", "rest", ""},
		{"2.0", "", `unknown protocol version "2.0"`}, {"1.0", "grpc", ""}, {"1.0", "soap", `unknown binding "soap"`},
	} {
		err := ValidateSuite(tt.protocol, tt.binding)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("ValidateSuite(%q, %q) = %v, want %q", tt.protocol, tt.binding, err, tt.want)
		}
	}
	if _, err := Run(t.Context(), Options{URL: "http://127.0.0.1:1", Protocol: "0.4"}); err == nil {
		t.Error("Run with protocol 0.4: no error")
	}
}

// TestUnencodable: a request the 1.0 encoder refuses is reported as an
// exchange that failed before it was sent, not a panic.
func TestUnencodable(t *testing.T) {
	p := newProbe(Options{URL: "http://127.0.0.1:1"})
	s := p.suite(BindingREST)
	s.iface = Interface{Version: "1.0", Binding: BindingREST, URL: "http://127.0.0.1:1/a2a/echo"}
	msg := userMessage("", "", "hello")
	msg.Metadata = map[string]any{"c": make(chan int)}
	r := s.do(t.Context(), s.send(msg, false))
	if r.ok || !strings.Contains(r.bad, "could not encode the request") || r.ex.Status != 0 {
		t.Fatalf("reply %+v", r)
	}
	if e := s.stream(t.Context(), s.send(msg, true), streamOpt{}); !strings.Contains(e.Err, "could not encode") || len(p.exchangesOf(s.key)) != 2 {
		t.Fatalf("stream exchange %+v", e)
	}
}

func TestShapeProblems(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{"kind":"free","final":true}}}`, ""},
		{`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}`, `/statusUpdate has a "final" member`},
		{`{"task":{"kind":"task","id":"t"}}`, `/task has a "kind" member`},
		{`{"message":{"role":"agent","parts":[{"text":"a","data":{}}]}}`, "/message/role is agent"},
		{`{"message":{"role":"ROLE_AGENT","parts":[{"text":"a","data":{}}]}}`, "/message/parts/* has 2 of text, raw, url, data"},
		{`{"task":{"context_id":"c"}}`, "/task/context_id is not camelCase"},
	}
	for _, tt := range tests {
		var got []string
		shapeProblems(decode([]byte(tt.doc)), "", &got)
		if all := strings.Join(got, "; "); (tt.want == "") != (all == "") || !strings.Contains(all, tt.want) {
			t.Errorf("%s: %q, want %q", tt.doc, all, tt.want)
		}
	}
}
