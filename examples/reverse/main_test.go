package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReverseAgent(t *testing.T) {
	h, stop := NewServer()
	defer stop()
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"one two three"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`"state":"completed"`, `{"kind":"text","text":"three "},{"kind":"text","text":"two "},{"kind":"text","text":"one "}`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("response lacks %s:\n%s", want, b)
		}
	}
	card, err := http.Get(ts.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := io.ReadAll(card.Body)
	card.Body.Close()
	if !strings.Contains(string(cb), `"url":"`+ts.URL+`/a2a/reverse"`) {
		t.Fatalf("card url is not reachable address: %s", cb)
	}
}
