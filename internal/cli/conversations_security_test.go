package cli

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// adHocPost posts a JSON-RPC message/send to an ad-hoc scenario's
// endpoint, with token as bearer credentials when set.
func adHocPost(t *testing.T, u, token string) (int, string) {
	t.Helper()
	return adHocDo(t, http.MethodPost, u, token, testutil.RPCBody("message/send", msg("hi", "m1", "")))
}

// adHocDo sends a request with body (JSON, none when empty) and token as
// bearer credentials when set, and returns the status and the body.
func adHocDo(t *testing.T, method, u, token, body string) (int, string) {
	t.Helper()
	hdr := bearer(token)
	if body != "" {
		hdr = append(hdr, "Content-Type", "application/json")
	}
	return call(t, method, u, body, hdr...)
}

// An ad-hoc scenario is authenticated before it is decoded or built, and
// its a2a participant cannot leave the allowlist by a redirect.
func TestAdHocAuthFirstAndAllowlistOnEveryRequest(t *testing.T) {
	var evilHits, allowedHits atomic.Int32
	evil := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilHits.Add(1)
		http.NotFound(w, r)
	}))
	allowed := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		http.Redirect(w, r, evil.URL+"/internal-admin", http.StatusFound)
	}))
	cfg := fmt.Sprintf("auth:\n  bearer_tokens:\n    alice: s3cret-token\nconversations:\n  adhoc: true\n  kinds: [a2a]\n  urls: [%s/agent]\n", allowed.URL)
	base := startServe(t, "--config", writeConfig(t, cfg))
	scen := fmt.Sprintf(`{"title":"t","agents":[{"id":"you","external":true},{"id":"r","kind":"a2a","config":{"url":"%s/agent"}}],"startingAgentId":"you"}`, allowed.URL)
	c64 := base64.RawURLEncoding.EncodeToString([]byte(scen))
	u := base + "/api/bridge/" + c64 + "/a2a"

	// Without credentials: 401 on every route, and nothing is dialled.
	if st, body := adHocPost(t, u, ""); st != http.StatusUnauthorized || !strings.Contains(body, "-32") {
		t.Fatalf("unauthenticated POST: %d %s", st, body)
	}
	if st, body := adHocPost(t, u, "wrong"); st != http.StatusUnauthorized {
		t.Fatalf("bad token POST: %d %s", st, body)
	}
	for _, path := range []string{"/diag", "/.well-known/agent-card.json", "/v1/tasks/x"} {
		if st, body := adHocDo(t, http.MethodGet, u+path, "", ""); st != http.StatusUnauthorized {
			t.Fatalf("unauthenticated GET %s: %d %s", path, st, body)
		}
	}
	if n, m := allowedHits.Load(), evilHits.Load(); n != 0 || m != 0 {
		t.Fatalf("unauthenticated requests made the server dial: allowed host %d, other host %d", n, m)
	}

	// With credentials: the scenario is built and its turn runs, but the
	// redirect from the allowed host is not followed.
	st, body := adHocPost(t, u, "s3cret-token")
	if st != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("authenticated POST: %d %s", st, body)
	}
	if allowedHits.Load() == 0 {
		t.Fatal("the allowed host got no request: the test proves nothing")
	}
	if n := evilHits.Load(); n != 0 {
		t.Fatalf("the host outside conversations.urls got %d requests (a redirect was followed)", n)
	}
	if st, _ := adHocDo(t, http.MethodGet, u+"/diag", "s3cret-token", ""); st != http.StatusOK {
		t.Fatalf("authenticated diag: %d", st)
	}
}

// One ad-hoc scenario is one hosted entry however its config64 is
// spelled; concurrent first requests share one build; at most
// maxAdHocBuilds builds run at once.
func TestAdHocBuildsKeyedAndBounded(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan string, 64)
	var mu sync.Mutex
	fetches := map[string]int{} // card fetches by path
	remote := testutil.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches[r.URL.Path]++
		mu.Unlock()
		arrived <- r.URL.Path
		<-release
		http.NotFound(w, r)
	}))
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	cfg := fmt.Sprintf("conversations:\n  adhoc: true\n  kinds: [a2a]\n  urls: [%s/]\n", remote.URL)
	base := startServe(t, "--config", writeConfig(t, cfg))
	t.Cleanup(free) // before the server stops: no build is left waiting
	c64 := func(i int) string {
		scen := fmt.Sprintf(`{"title":"t","agents":[{"id":"you","external":true},{"id":"r","kind":"a2a","config":{"url":"%s/agent%d"}}],"startingAgentId":"you"}`, remote.URL, i)
		return base64.RawURLEncoding.EncodeToString([]byte(scen))
	}
	card := func(c string) string { return base + "/api/bridge/" + c + "/a2a/.well-known/agent-card.json" }

	// Three spellings of scenario 0 at once, and scenarios 1 to 3: four
	// builds, each blocked in its card fetch.
	type result struct {
		status int
		body   string
	}
	results := make(chan result, 16)
	get := func(u string) {
		go func() {
			st, body := adHocDo(t, http.MethodGet, u, "", "")
			results <- result{st, body}
		}()
	}
	for _, pad := range []string{"", "=", "=="} {
		get(card(c64(0) + pad))
	}
	for i := 1; i <= 3; i++ {
		get(card(c64(i)))
	}
	for range 4 {
		<-arrived
	}
	// A fifth scenario is refused while four are being built.
	st, body := adHocDo(t, http.MethodGet, card(c64(4)), "", "")
	if st != http.StatusServiceUnavailable || !strings.Contains(body, "being built") {
		t.Fatalf("fifth build: %d %s", st, body)
	}
	free()
	for range 6 {
		if r := <-results; r.status != http.StatusOK {
			t.Fatalf("card: %d %s", r.status, r.body)
		}
	}
	// Every spelling is the same hosted scenario: no more builds, and the
	// card gives the canonical URL.
	var cards []string
	for _, pad := range []string{"", "=", "==", "==="} {
		st, body := adHocDo(t, http.MethodGet, card(c64(0)+pad), "", "")
		if st != http.StatusOK {
			t.Fatalf("card %q: %d %s", pad, st, body)
		}
		cards = append(cards, body)
	}
	mu.Lock()
	n := fetches["/agent0/.well-known/agent-card.json"]
	mu.Unlock()
	if n != 1 {
		t.Fatalf("scenario 0's participant fetched its card %d times; want 1 (one build)", n)
	}
	for _, c := range cards[1:] {
		if c != cards[0] {
			t.Fatalf("cards differ by spelling:\n%s\n%s", cards[0], c)
		}
	}
	// A task started at one spelling is read at another, on the JSON-RPC
	// endpoint and on an HTTP+JSON route below it.
	st, body = adHocPost(t, base+"/api/bridge/"+c64(0)+"/a2a", "")
	i := strings.Index(body, `"id":"`)
	if st != http.StatusOK || !strings.Contains(body, `"kind":"task"`) || i < 0 {
		t.Fatalf("send: %d %s", st, body)
	}
	taskID := body[i+6:]
	taskID = taskID[:strings.IndexByte(taskID, '"')]
	getReq := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":%q}}`, taskID)
	if st, body := adHocDo(t, http.MethodPost, base+"/api/bridge/"+c64(0)+"=/a2a", "", getReq); st != http.StatusOK || !strings.Contains(body, taskID) || strings.Contains(body, `"error"`) {
		t.Fatalf("tasks/get at another spelling: %d %s", st, body)
	}
	if st, body := adHocDo(t, http.MethodGet, base+"/api/bridge/"+c64(0)+"==/a2a/v1/tasks/"+taskID, "", ""); st != http.StatusOK || !strings.Contains(body, taskID) {
		t.Fatalf("HTTP+JSON tasks/get at another spelling: %d %s", st, body)
	}
}
