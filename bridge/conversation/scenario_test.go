package conversation_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/bridge/conversation"
)

const good = `{"title":"T","agents":[{"id":"me","external":true},{"id":"bot","kind":"echo","config":{"url":"https://api.example.com/v1/chat"}}],"startingAgentId":"me"}`

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, json, field, msg string }{
		{"bad json", `{"title":`, "scenario", "not a scenario JSON object"},
		{"not object", `[]`, "scenario", ""},
		{"unknown member", `{"title":"T","bogus":1}`, "bogus", "unknown"},
		{"case", `{"Title":"T"}`, "Title", "unknown"},
		{"wrong type", `{"title":5}`, "title", ""},
		{"duplicate member", `{"title":"a","title":"b"}`, "", "duplicate"},
		{"no title", `{"agents":[]}`, "title", "required"},
		{"one agent", `{"title":"T","agents":[{"id":"me","external":true}],"startingAgentId":"me"}`, "agents", "want 2 to 32"},
		{"no id", `{"title":"T","agents":[{"external":true},{"id":"b","kind":"echo"}]}`, "agents[0].id", "required"},
		{"bad id", `{"title":"T","agents":[{"id":"a b","external":true},{"id":"b","kind":"echo"}]}`, "agents[0].id", "letters"},
		{"dup id", `{"title":"T","agents":[{"id":"me","external":true},{"id":"bob","kind":"echo"},{"id":"bob","kind":"echo"}],"startingAgentId":"me"}`, "agents[2].id", `duplicate "bob"`},
		{"two external", `{"title":"T","agents":[{"id":"me","external":true},{"id":"you","external":true}],"startingAgentId":"me"}`, "agents[1].external", "only one"},
		{"external kind", `{"title":"T","agents":[{"id":"me","external":true,"kind":"echo"},{"id":"b","kind":"echo"}],"startingAgentId":"me"}`, "agents[0].kind", "no kind"},
		{"external config", `{"title":"T","agents":[{"id":"me","external":true,"config":{"a":1}},{"id":"b","kind":"echo"}],"startingAgentId":"me"}`, "agents[0].config", "no config"},
		{"no kind", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b"}],"startingAgentId":"me"}`, "agents[1].kind", "required"},
		{"bad kind", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"no such"}],"startingAgentId":"me"}`, "agents[1].kind", "unknown kind"},
		{"no external", `{"title":"T","agents":[{"id":"a","kind":"echo"},{"id":"b","kind":"echo"}],"startingAgentId":"a"}`, "agents", "external"},
		{"no start", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}]}`, "startingAgentId", "required"},
		{"start unknown", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"x"}`, "startingAgentId", `"x" is not among the agents`},
		{"start internal", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"b"}`, "startingAgentId", "internal"},
		{"policy", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"turnPolicy":"chaos"}}`, "rules.turnPolicy", "unknown policy"},
		{"mod missing", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"turnPolicy":"moderator"}}`, "rules.moderatorId", "required"},
		{"mod unknown", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"turnPolicy":"moderator","moderatorId":"z"}}`, "rules.moderatorId", "not among"},
		{"mod without policy", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"moderatorId":"b"}}`, "rules.moderatorId", "only with"},
		{"max turns", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"maxTurns":5000}}`, "rules.maxTurns", "1 to 1000"},
		{"timeout", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"turnTimeout":"soon"}}`, "rules.turnTimeout", "duration"},
		{"failure", `{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"echo"}],"startingAgentId":"me","rules":{"onParticipantFailure":"panic"}}`, "rules.onParticipantFailure", "want"},
		{"long title", `{"title":"` + strings.Repeat("x", 201) + `"}`, "title", "at most 200"},
		{"long name", `{"title":"T","agents":[{"id":"me","external":true,"displayName":"` + strings.Repeat("x", 101) + `"},{"id":"b","kind":"echo"}],"startingAgentId":"me"}`, "agents[0].displayName", "at most 100"},
		{"nested type", `{"title":"T","agents":[{"id":"me","external":"yes"}]}`, "agents[0].external", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := conversation.ParseJSON([]byte(c.json))
			if err == nil {
				t.Fatal("no error")
			}
			var fe *conversation.FieldError
			if c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
				t.Fatalf("error %q: want field %q", err, c.field)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q: want %q", err, c.msg)
			}
		})
	}
}

func TestConfig64(t *testing.T) {
	s, err := conversation.ParseJSON([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	c := conversation.EncodeConfig64(s)
	if strings.ContainsAny(c, "=+/") {
		t.Fatalf("config64 %q is not unpadded base64url", c)
	}
	back, err := conversation.DecodeConfig64(c, 0)
	if err != nil || string(back.JSON()) != string(s.JSON()) {
		t.Fatalf("round trip: %v %s", err, back.JSON())
	}
	padded := base64.URLEncoding.EncodeToString(s.JSON())
	if _, err := conversation.DecodeConfig64(padded, 0); err != nil {
		t.Fatalf("padded: %v", err)
	}
	for _, bad := range []struct{ in, msg string }{
		{"", "empty"},
		{"!!!!", "not base64url"},
		{base64.StdEncoding.EncodeToString([]byte(good + "\xff\xfe")), "not base64url"}, // '+' or '/' or bad JSON
		{base64.RawURLEncoding.EncodeToString([]byte("{")), "not a scenario"},
		{strings.Repeat("A", 100), "over the limit"},
	} {
		_, err := conversation.DecodeConfig64(bad.in, 64)
		if bad.msg == "not base64url" {
			_, err = conversation.DecodeConfig64(bad.in, 0)
			if err == nil {
				t.Fatalf("%q: no error", bad.in)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Fatalf("%q: error %v, want %q", bad.in, err, bad.msg)
		}
	}
}

func TestAllow(t *testing.T) {
	s, err := conversation.ParseJSON([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	ok := conversation.Allow{Kinds: []string{"echo"}, URLs: []string{"https://api.example.com/v1"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := ok.Check(s); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	for _, c := range []struct {
		a   conversation.Allow
		url string
		msg string
	}{
		{conversation.Allow{}, "", `agents[1].kind: "echo" is not allowed in an ad-hoc scenario on this server (allowed: none)`},
		{conversation.Allow{Kinds: []string{"echo"}}, "", "agents[1].config.url: this URL is not allowed"},
		{ok, "https://api.example.com.evil.net/v1", "agents[1].config.url"},
		{ok, "https://api.example.com/v10", "agents[1].config.url"},
		{ok, "http://api.example.com/v1", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/../admin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/..;/admin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/..;jsessionid=x/admin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/.;/x", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/%2E%2E/admin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/..%2fadmin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/..%5Cadmin", "agents[1].config.url"},
		{ok, "https://api.example.com/v1/..", "agents[1].config.url"},
		{ok, "https://user@api.example.com/v1/x", "agents[1].config.url"},
		{ok, "file:///etc/passwd", "agents[1].config.url"},
	} {
		if c.url != "" {
			s.Agents[1].Config["url"] = c.url
		}
		err := c.a.Check(s)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("url %q: error %v, want %q", c.url, err, c.msg)
		}
	}
	s.Agents[1].Config = map[string]any{"command": []any{"sh", "-c", "curl http://evil.net"}}
	if err := ok.Check(s); err == nil || !strings.Contains(err.Error(), "agents[1].config.command[2]") {
		t.Fatalf("nested url: %v", err)
	}
	if err := (conversation.Allow{URLs: []string{"ftp://x"}}).Validate(); err == nil {
		t.Fatal("ftp prefix accepted")
	}
}
