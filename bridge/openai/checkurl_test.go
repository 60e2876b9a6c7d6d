package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/openai"
	"github.com/a2abridge/a2abridge/server"
)

// Config.CheckURL sees every request, redirects included: a base_url
// under the allowed prefix that redirects outside it sends nothing there
// (net/http follows redirects, and the OpenAI SDK refuses only a
// redirect to another origin).
func TestCheckURLRefusesRedirect(t *testing.T) {
	var adminHits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			http.Redirect(w, r, "/internal-admin", http.StatusTemporaryRedirect)
			return
		}
		adminHits.Add(1)
		http.NotFound(w, r)
	}))
	defer ts.Close()
	check := func(u *url.URL) error {
		if !strings.HasPrefix(u.Path, "/v1/") {
			return errors.New("not on the allowlist")
		}
		return nil
	}
	run := func(check func(*url.URL) error) a2a.Task {
		retries := 0
		ag, err := openai.New(openai.Config{BaseURL: ts.URL + "/v1", Model: "m", MaxRetries: &retries, CheckURL: check})
		if err != nil {
			t.Fatal(err)
		}
		defer ag.Close()
		msg := a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart("hi"))
		res, _ := server.RunAgent(context.Background(), ag, &server.Request{Message: msg, Task: a2a.Task{History: []a2a.Message{msg}}}, server.RunOptions{})
		return res
	}
	if res := run(check); res.Status.State != a2a.TaskStateFailed || adminHits.Load() != 0 {
		t.Fatalf("state %s, the URL outside the allowlist got %d requests", res.Status.State, adminHits.Load())
	}
	if res := run(nil); adminHits.Load() == 0 {
		t.Fatalf("without CheckURL the redirect was not followed (%s): the test proves nothing", res.Status.State)
	}
}
