package gateway

// The web console in a real browser: Debian's chromium, headless, driven
// with chromedp over the DevTools protocol. Without chromium the test is
// skipped (under CI, where .ci/run installs it, it fails). Screenshots of
// each view are written to $A2ABRIDGE_CONSOLE_SCREENSHOTS when it is set
// (docs/guides/console.md shows them), else to the test's temporary
// directory.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2abridge/a2abridge/internal/testutil"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// chromium is the path of Debian's chromium (or another Chromium or
// Chrome on PATH); "" when there is none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless chromium tab at 1280×800; uncaught exceptions and
// console.error calls of the page fail the test at its end.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
	mu    sync.Mutex
	errs  []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the console's browser tests start chromium")
	}
	path := chromium()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium); under CI the console's browser test must run")
		}
		t.Skip("chromium is not installed (apt-get install chromium): the console's browser test is skipped")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	b := &browser{t: t, ctx: ctx, shots: os.Getenv("A2ABRIDGE_CONSOLE_SCREENSHOTS")}
	if b.shots == "" {
		b.shots = t.TempDir()
	}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	messages := chromedp.Console(ctx)
	read := make(chan struct{})
	go func() {
		defer close(read)
		for m, err := range messages {
			if err != nil {
				return
			}
			// Failed loads (Source "network": the 401s the tests cause) are
			// the browser's log, not the page's errors.
			if m.IsException() || m.Type == chromedp.ConsoleType("error") && m.Source == "" {
				b.mu.Lock()
				b.errs = append(b.errs, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		<-read
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errs {
			t.Errorf("the page reported: %s", e)
		}
	})
	return b
}

// do runs actions, failing the test with what with names.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// until waits for the JavaScript expression js to be true.
func (b *browser) until(what, js string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		body, _ := chromedp.Run(b.ctx, chromedp.Text("main"))
		b.t.Fatalf("%s: %s never held: %v\nthe page says:\n%s", what, js, err, body)
	}
}

// shot writes a PNG of the viewport as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// contrastJS is the lowest contrast ratio (WCAG 2.x) of the page's text
// against its background: body text, muted text, links, state badges,
// and buttons against their own colour.
const contrastJS = `(() => {
	const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
	const lum = (c) => {
		const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const bg = getComputedStyle(document.body).backgroundColor;
	const pairs = [...document.querySelectorAll('main p, main .muted, main a, main .state, main label, main td, main dt')]
		.map((el) => [getComputedStyle(el).color, bg]);
	for (const b of document.querySelectorAll('main button')) {
		const s = getComputedStyle(b);
		pairs.push([s.color, s.backgroundColor.startsWith('rgba(0, 0, 0, 0)') ? bg : s.backgroundColor]);
	}
	return Math.min(...pairs.map(([f, b]) => ratio(f, b)));
})()`

// lowestContrast is contrastJS on the page shown.
func (b *browser) lowestContrast() float64 {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](contrastJS))
	if err != nil {
		b.t.Fatalf("contrast: %v", err)
	}
	b.t.Logf("lowest contrast: %.2f", v)
	return v
}

// rpc calls an A2A 1.0 JSON-RPC method (testutil.RPC) and decodes its
// result.
func rpc(t *testing.T, url, method string, params, result any) {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	_, body := testutil.RPC(t, url, method, string(p), "A2A-Version", "1.0", "Content-Type", "application/json")
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %v: %s", method, err, out.Error, body)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		t.Fatal(err)
	}
}

func TestConsoleInBrowser(t *testing.T) {
	g := newTestGateway(t, &Config{Push: PushConfig{Enabled: true, Allow: []string{"127.0.0.0/8"}}})
	b := newBrowser(t)
	base := g.URL()

	// The agents.
	b.do("open the console", chromedp.Navigate(base+"/console/"))
	b.until("the agents are listed", `document.querySelectorAll('ul.cards li').length === 3 && document.querySelector('a[href="/console/agents/slow"]') !== null`)
	b.until("their cards are shown", `[...document.querySelectorAll('ul.cards li')].every((li) => li.textContent.includes('JSONRPC 1.0'))`)
	b.shot("agents")

	// The page's SSE parser, on bodies cut anywhere: CRLF and LF line
	// ends, an event split across reads, multi-line data, comments
	// (keep-alives), an event without data, and a last event without its
	// blank line (not an event: the stream ended inside it).
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(async () => {
		const { sseEvents } = await import('/console/assets/a2a.js');
		const chunks = ['id: 1\r\ndata: {"a"', ':1}\r\n\r', '\n: keep-alive\n\nevent: error\nid: 2\ndata: x\ndata: y\n\n',
			'id: 3\n\ndata:no-space\n\n', 'data: cut'];
		const body = new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(new TextEncoder().encode(x)); c.close(); } });
		const out = [];
		for await (const ev of sseEvents(body)) out.push([ev.event, ev.id, ev.data].join('|'));
		return out.join(' / ');
	})()`, chromedp.EvalAwaitPromise))
	if want := `|1|{"a":1} / error|2|x` + "\n" + `y / ||no-space`; err != nil || got != want {
		t.Errorf("sseEvents: %q, %v; want %q", got, err, want)
	}

	// A chat with echo, streamed; the raw exchanges beside it.
	b.do("open echo", chromedp.Click(`a[href="/console/agents/echo"]`))
	b.until("echo's page", `document.querySelector('#chat-text') !== null && document.querySelector('h1').textContent === 'echo'`)
	b.do("type a message", chromedp.SendKeys("#chat-text", "hello console"), chromedp.Click(`form[aria-label="Chat with echo"] button[type="submit"]`))
	b.until("the echo streams back", `[...document.querySelectorAll('.transcript li.agent')].some((li) => li.textContent.includes('hello console'))`)
	b.until("the task completes", `document.querySelector('#chat-status .state')?.textContent === 'completed'`)
	b.until("the raw exchanges show the request and the SSE frames",
		`[...document.querySelectorAll('.log summary')].some((s) => s.textContent.includes('SendStreamingMessage')) && `+
			`[...document.querySelectorAll('.log summary')].filter((s) => s.textContent.startsWith('SSE')).length >= 3`)
	b.shot("chat")
	link, err := chromedp.Run(b.ctx, chromedp.AttributeValue(`#chat-status a`, "href"))
	href := link.Value
	if err != nil || !strings.HasPrefix(href, "/console/agents/echo/tasks/") {
		t.Fatalf("the chat links its task at %q (%v)", href, err)
	}

	// A data part and a file, echoed back: the data as JSON, the file as a
	// download link.
	note := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(note, []byte("a file from the console"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.until("send is enabled again", `!document.querySelector('form[aria-label="Chat with echo"] button[type="submit"]').disabled`)
	b.do("attach a data part and a file", chromedp.Click(`//button[text()="New task"]`), chromedp.Click(`//summary[text()="Add a data part or a file"]`),
		chromedp.SetValue("#chat-data", `{"n": 1, "tag": "<b>not html</b>"}`), chromedp.SetUploadFiles("#chat-file", []string{note}),
		chromedp.SendKeys("#chat-text", "with parts"), chromedp.Click(`form[aria-label="Chat with echo"] button[type="submit"]`))
	b.until("they come back", `(() => { const li = [...document.querySelectorAll('.transcript li.agent')].at(-1);`+
		` return li && li.textContent.includes('"tag": "<b>not html</b>"') && li.querySelector('b') === null && li.querySelector('a[download="note.txt"]') !== null; })()`)

	// The task, opened by its link in a fresh page load, with a push
	// notification config whose secrets are not shown.
	taskID := strings.TrimPrefix(href, "/console/agents/echo/tasks/")
	var cfg map[string]any
	rpc(t, base+"/a2a/echo", "CreateTaskPushNotificationConfig", map[string]any{"taskId": taskID, "id": "hook-1",
		"url": "http://127.0.0.1:9/hook", "token": "push-secret-token", "authentication": map[string]any{"scheme": "Bearer", "credentials": "push-secret-credentials"}}, &cfg)
	b.do("open the task by its link", chromedp.Navigate(base+href))
	b.until("the task page", `document.querySelector('#task-state .state')?.textContent === 'completed'`)
	b.until("its event log", `document.querySelectorAll('.timeline li').length >= 3 && document.querySelector('.timeline').textContent.includes('completed')`)
	b.until("its artifact", `document.querySelector('main').textContent.includes('hello console')`)
	b.until("its push config, secrets redacted", `document.querySelector('main').textContent.includes('http://127.0.0.1:9/hook') && document.querySelector('main').textContent.includes('Bearer') && document.querySelector('main').textContent.includes('are not read back') && !document.querySelector('main').textContent.includes('push-secret')`)
	b.shot("task")

	// A running slow task, followed live and canceled from its page.
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	rpc(t, base+"/a2a/slow", "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": "console-slow", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "60"}}},
		"configuration": map[string]any{"returnImmediately": true},
	}, &sent)
	task := sent.Task
	if task.ID == "" {
		t.Fatal("SendMessage to slow returned no task")
	}
	b.do("open the slow task", chromedp.Navigate(fmt.Sprintf("%s/console/agents/slow/tasks/%s", base, task.ID)))
	b.until("it works", `document.querySelector('#task-state .state')?.textContent === 'working'`)
	b.until("it is followed live", `document.querySelector('.timeline').textContent.includes('working')`)
	b.do("cancel it", chromedp.Click("#task-cancel"))
	b.until("it ends canceled", `document.querySelector('#task-state .state')?.textContent === 'canceled'`)
	b.until("the event log ends", `document.querySelector('.timeline').textContent.includes('canceled')`)
	b.shot("task-canceled")

	// The tasks of slow, filtered by state.
	b.do("open slow's tasks", chromedp.Navigate(base+"/console/agents/slow/tasks"))
	b.until("the canceled task is listed", fmt.Sprintf(`document.querySelector('a[href="/console/agents/slow/tasks/%s"]') !== null`, task.ID))
	b.shot("tasks")

	// A multi-turn chat over A2A 0.3 JSON-RPC: chat asks for more until
	// "bye".
	b.do("open chat", chromedp.Navigate(base+"/console/agents/chat"))
	b.until("its page offers 0.3", `[...document.querySelectorAll('#chat-binding option')].some((o) => o.value === 'JSONRPC|0.3')`)
	b.do("speak 0.3", chromedp.SetValue("#chat-binding", "JSONRPC|0.3"), chromedp.SendKeys("#chat-text", "hi there"), chromedp.Click(`form[aria-label="Chat with chat"] button[type="submit"]`))
	b.until("it asks for more", `document.querySelector('#chat-status .state')?.textContent === 'input-required' && document.querySelector('.transcript').textContent.includes('you said "hi there"')`)
	b.until("send is enabled again", `!document.querySelector('form[aria-label="Chat with chat"] button[type="submit"]').disabled`)
	b.do("say bye", chromedp.SendKeys("#chat-text", "bye"), chromedp.Click(`form[aria-label="Chat with chat"] button[type="submit"]`))
	b.until("the task completes", `document.querySelector('#chat-status .state')?.textContent === 'completed' && document.querySelector('.transcript').textContent.includes('Goodbye')`)
	b.until("over 0.3", `[...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('"method": "message/stream"')) && [...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('"kind":"status-update"'))`)

	// The conformance check, run from echo's page.
	b.do("open echo", chromedp.Navigate(base+"/console/agents/echo"))
	b.until("its check form", `document.querySelector('form[aria-label="Run check"]') !== null`)
	b.do("run the check", chromedp.Click(`form[aria-label="Run check"] button`))
	b.until("the report", `document.querySelector('#check-report')?.textContent.startsWith('score 100.0 %') && document.querySelector('#check-report').textContent.includes('A2A 1.0 JSON-RPC')`)
	b.do("show the report", chromedp.ScrollIntoView("#check-h"))
	b.shot("check")

	// A phone's width: nothing is wider than the screen.
	b.do("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/console/agents/echo"))
	b.until("echo's page on a phone", `document.querySelector('#chat-text') !== null && document.querySelector('.log') !== null`)
	b.until("nothing wider than the screen", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.shot("phone")
	if c := b.lowestContrast(); !(c >= 4.5) {
		t.Errorf("the lowest contrast of the light theme is %.2f, want ≥ 4.5 (WCAG AA)", c)
	}

	// Dark: the system's dark theme is followed.
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	b.do("a desktop's width", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/console/agents/echo"))
	b.until("dark colours", `getComputedStyle(document.body).backgroundColor === 'rgb(13, 17, 23)' && document.querySelector('#chat-text') !== null`)
	b.until("no stray text", `![...document.querySelector('main').childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '')`)
	b.shot("dark")
	if c := b.lowestContrast(); !(c >= 4.5) {
		t.Errorf("the lowest contrast of the dark theme is %.2f, want ≥ 4.5 (WCAG AA)", c)
	}
}

// A gateway that requires a bearer token: the console shows the 401 and
// what to do, and works once the token is entered (kept in the tab's
// session storage).
func TestConsoleAuthInBrowser(t *testing.T) {
	g := newTestGateway(t, &Config{Auth: &AuthConfig{BearerTokens: map[string]string{"alice": "s3cret-console"}}})
	b := newBrowser(t)
	b.do("open echo", chromedp.Navigate(g.URL()+"/console/agents/echo"))
	b.until("echo's page asks for credentials", `document.querySelector('details.credentials[open] #cred-bearer') !== null && document.querySelector('main').textContent.includes('HTTP Bearer token')`)
	b.do("send without a token", chromedp.SendKeys("#chat-text", "who am I"), chromedp.Click(`form[aria-label="Chat with echo"] button[type="submit"]`))
	b.until("the 401 is shown with what to do", `[...document.querySelectorAll('.transcript .error')].some((e) => e.textContent.includes('HTTP 401') && e.textContent.includes('enter them under Credentials'))`)
	b.shot("auth-refused")
	b.do("enter the token", chromedp.SendKeys("#cred-bearer", "s3cret-console"), chromedp.Click(`form[aria-label="Credentials"] button[type="submit"]`))
	b.until("it is kept for the tab", `JSON.parse(sessionStorage.getItem('a2abridge-console-credentials')).bearer === 's3cret-console'`)
	b.until("send is enabled again", `!document.querySelector('form[aria-label="Chat with echo"] button[type="submit"]').disabled`)
	b.do("send with the token", chromedp.SendKeys("#chat-text", "now with a token"), chromedp.Click(`form[aria-label="Chat with echo"] button[type="submit"]`))
	b.until("the echo completes", `document.querySelector('#chat-status .state')?.textContent === 'completed'`)
	b.until("the token is not shown in the raw exchanges", `![...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('s3cret-console')) && [...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('Authorization: Bearer …'))`)
	b.do("open echo's tasks", chromedp.Navigate(g.URL()+"/console/agents/echo/tasks"))
	b.until("the task is listed, with the token", `document.querySelectorAll('tbody tr').length === 1`)
}

// The registry: an http agent registered and removed from the page, with
// the admin API's validation message for a bad registration.
func TestConsoleRegistryInBrowser(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
			Input  any    `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"task_id": req.TaskID, "status": "success", "output": req.Input, "error": nil})
	}))
	t.Cleanup(backend.Close)
	g := newTestGateway(t, &Config{Admin: &AdminConfig{BearerTokens: map[string]string{"ops": "admin-console-token"}}})
	// With an admin block, the console reads another server's card only
	// for the admin token's holder; a hosted agent's card for anyone.
	for _, c := range []struct {
		query, token string
		status       int
	}{
		{"url=" + url.QueryEscape(backend.URL), "", http.StatusUnauthorized},
		{"url=" + url.QueryEscape(backend.URL), "wrong", http.StatusUnauthorized},
		{"url=" + url.QueryEscape(backend.URL), "admin-console-token", http.StatusBadGateway}, // loopback: not allowed for push
		{"agent=echo", "", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, g.URL()+"/console/api/card?"+c.query, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET /console/api/card?%s with %q: %d, want %d", c.query, c.token, resp.StatusCode, c.status)
		}
	}
	b := newBrowser(t)
	b.do("open the registry", chromedp.Navigate(g.URL()+"/console/registry"))
	b.until("it asks for the admin token", `document.querySelector('main').textContent.includes('Enter an admin token')`)
	b.do("enter a wrong token", chromedp.SendKeys("#admin-token", "wrong"), chromedp.Click(`form[aria-label="Admin token"] button`))
	b.until("the 401 is shown", `document.querySelector('main .error')?.textContent.includes('HTTP 401')`)
	b.do("enter the admin token", chromedp.SetValue("#admin-token", "admin-console-token"), chromedp.Click(`form[aria-label="Admin token"] button`))
	b.until("the configured agents are listed", `['echo', 'chat', 'slow'].every((n) => document.querySelector('tr[data-agent="' + n + '"]'))`)

	b.do("register without a url", chromedp.SendKeys("#reg-name", "weather"), chromedp.Click(`form[aria-label="Register an agent"] button[type="submit"]`))
	b.until("the API's message names the key", `document.querySelector('main .error')?.textContent.includes('HTTP 400') && document.querySelector('main .error').textContent.includes('url') && document.querySelector('#reg-url').getAttribute('aria-invalid') === 'true'`)
	b.do("register with the url", chromedp.SendKeys("#reg-url", backend.URL), chromedp.Click(`form[aria-label="Register an agent"] button[type="submit"]`))
	b.until("weather is registered and running", `document.querySelector('tr[data-agent="weather"] .agent-state')?.textContent === 'running'`)
	b.shot("registry")

	b.do("chat with weather", chromedp.Navigate(g.URL()+"/console/agents/weather"))
	b.until("its page", `document.querySelector('#chat-text') !== null`)
	b.do("send", chromedp.SendKeys("#chat-text", "sunny"), chromedp.Click(`form[aria-label="Chat with weather"] button[type="submit"]`))
	b.until("the backend answers", `document.querySelector('#chat-status .state')?.textContent === 'completed' && document.querySelector('.transcript li.agent')?.textContent.includes('sunny')`)

	b.do("back to the registry", chromedp.Navigate(g.URL()+"/console/registry"))
	b.until("weather is listed", `document.querySelector('tr[data-agent="weather"] button') !== null`)
	b.do("remove weather", chromedp.Click(`tr[data-agent="weather"] button`))
	b.until("weather is removed", `document.querySelector('tr[data-agent="weather"] .agent-state')?.textContent === 'removed'`)
	if got := g.Agents(); strings.Contains(strings.Join(got, ","), "weather") {
		t.Errorf("the gateway still hosts weather: %q", got)
	}
}

// consoleConversationConfig hosts a named scenario of the client and an
// echo, round robin, and pairs.
const consoleConversationConfig = `
agents:
  meeting:
    kind: conversation
    scenario:
      title: Meeting
      scenarioId: meeting-v1
      agents:
        - {id: you, displayName: You, external: true}
        - {id: echo, displayName: Echo, kind: echo}
      startingAgentId: you
      rules: {turnPolicy: round-robin, maxTurns: 10}
conversations:
  adhoc: true
  kinds: [echo]
pairs:
  enabled: true
admin:
  bearer_tokens: {ops: admin-console-token}
`

// A conversation with the client's turns taken in the chat, who speaks
// shown; a pair created, both sides joined, watched on the backchannel,
// and ended from the page.
func TestConsoleConversationsInBrowser(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "conversation.yaml")
	if err := os.WriteFile(cfgPath, []byte(consoleConversationConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	g := newTestGateway(t, cfg)
	b := newBrowser(t)
	b.do("open the conversations", chromedp.Navigate(g.URL()+"/console/conversations"))
	b.until("the scenario is listed", `document.querySelector('a[href="/console/agents/meeting"]')?.textContent === 'Meeting'`)
	b.do("open it", chromedp.Click(`a[href="/console/agents/meeting"]`))
	b.until("its chat", `document.querySelector('form[aria-label="Chat with meeting"]') !== null`)
	b.do("take the first turn", chromedp.SendKeys("#chat-text", "good morning"), chromedp.Click(`form[aria-label="Chat with meeting"] button[type="submit"]`))
	b.until("Echo speaks, named, and it is the client's turn again",
		`[...document.querySelectorAll('.transcript li.agent .tag')].some((t) => t.textContent === 'Echo') && document.querySelector('#chat-status .state')?.textContent === 'input-required'`)
	b.until("send is enabled again", `!document.querySelector('form[aria-label="Chat with meeting"] button[type="submit"]').disabled`)
	b.do("take the next turn", chromedp.SendKeys("#chat-text", "and again"), chromedp.Click(`form[aria-label="Chat with meeting"] button[type="submit"]`))
	b.until("the same task goes on", `document.querySelectorAll('.transcript li.agent').length === 2 && document.querySelector('.transcript').textContent.includes('and again') && document.querySelector('#chat-status .state')?.textContent === 'input-required'`)
	b.until("each turn is shown once", `[...document.querySelectorAll('.transcript li.agent')].map((li) => li.textContent.split('good morning').length - 1).join() === '2,0'`)
	b.shot("conversation")

	// An ad-hoc scenario: a bad one is refused naming its field; the
	// example starts and answers.
	b.do("back to the conversations", chromedp.Navigate(g.URL()+"/console/conversations"))
	b.until("the ad-hoc form", `document.querySelector('#adhoc-json')?.value.includes('Echo room')`)
	b.do("start a bad scenario", chromedp.SetValue("#adhoc-json", `{"title": "x", "agents": []}`), chromedp.Click(`form[aria-label="Start an ad-hoc scenario"] button`))
	b.until("it is refused with its field", `document.querySelector('form[aria-label="Start an ad-hoc scenario"] .error')?.textContent.includes('HTTP 400') && document.querySelector('form[aria-label="Start an ad-hoc scenario"] .error').textContent.includes('field')`)
	b.do("back to the example", chromedp.Navigate(g.URL()+"/console/conversations"))
	b.until("the ad-hoc form", `document.querySelector('#adhoc-json')?.value.includes('Echo room')`)
	b.do("start it", chromedp.Click(`form[aria-label="Start an ad-hoc scenario"] button`))
	b.until("its chat", `location.pathname.startsWith('/console/scenario/') && document.querySelector('form[aria-label="Chat with Echo room"]') !== null`)
	b.do("take the first turn", chromedp.SendKeys("#chat-text", "ad hoc"), chromedp.Click(`form[aria-label="Chat with Echo room"] button[type="submit"]`))
	b.until("Echo answers", `[...document.querySelectorAll('.transcript li.agent .tag')].some((t) => t.textContent === 'Echo') && document.querySelector('#chat-status .state')?.textContent === 'input-required'`)
	b.shot("adhoc")

	b.do("back to the conversations", chromedp.Navigate(g.URL()+"/console/conversations"))
	b.until("the pairs section", `document.querySelector('#pair-create') !== null`)
	b.do("create a pair without the admin token", chromedp.Click("#pair-create"))
	b.until("the 401 says what to do", `[...document.querySelectorAll('main .error')].some((e) => e.textContent.startsWith('Creating a pair: HTTP 401') && e.textContent.includes('enter the admin token'))`)
	b.do("enter the admin token", chromedp.SetValue("#admin-token", "admin-console-token"), chromedp.Click(`form[aria-label="Admin token"] button`))
	b.do("create a pair", chromedp.Click("#pair-create"))
	b.until("the pair is listed with both sides and watched", `document.querySelectorAll('tr[data-pair] a').length === 2 && document.querySelector('.timeline li[data-type="created"]') !== null`)
	var pairs struct {
		Pairs []struct {
			ID string `json:"id"`
			A  struct {
				URL string `json:"url"`
			} `json:"a"`
			B struct {
				URL string `json:"url"`
			} `json:"b"`
		} `json:"pairs"`
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL()+"/api/pairs", nil)
	req.Header.Set("Authorization", "Bearer admin-console-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&pairs)
	resp.Body.Close()
	if len(pairs.Pairs) != 1 {
		t.Fatalf("pairs: %+v", pairs)
	}
	p := pairs.Pairs[0]
	// The console's list of agents, which needs no credentials, does not
	// name the sides (their names are their capability).
	resp, err = http.Get(g.URL() + "/console/api/agents")
	if err != nil {
		t.Fatal(err)
	}
	var listed bytes.Buffer
	_, _ = listed.ReadFrom(resp.Body)
	resp.Body.Close()
	if strings.Contains(listed.String(), "pair-") || !strings.Contains(listed.String(), `"meeting"`) {
		t.Errorf("GET /console/api/agents: %s", listed.String())
	}
	// Side A speaks first (a non-blocking send: it waits for B), then B
	// joins with a message of its own.
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	rpc(t, p.A.URL, "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": "pair-a-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Hello, B."}}},
		"configuration": map[string]any{"returnImmediately": true},
	}, &sent)
	rpc(t, p.B.URL, "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": "pair-b-1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Hi, I am B."}}},
		"configuration": map[string]any{"returnImmediately": true},
	}, &sent)
	b.until("the backchannel shows the join and A's turn", `document.querySelector('.timeline li[data-type="join"]') !== null && [...document.querySelectorAll('.timeline li[data-type="turn"]')].some((li) => li.textContent.includes('Hello, B.'))`)
	b.shot("pairs")
	b.do("end the pair", chromedp.Click(`tr[data-pair] button[aria-label^="End pair"]`))
	b.until("it ends completed", `document.querySelector('.timeline li[data-type="end"]')?.textContent.includes('completed') && document.querySelector('tr[data-pair] .pair-state')?.textContent === 'ended: completed'`)
}

// Cards: a hosted agent's signature verified with the gateway's key; a
// card at another URL read by the server (an allowed loopback one), and
// one at a cloud metadata address refused by the push SSRF rules.
func TestConsoleCardsInBrowser(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "card.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent/.well-known/agent-card.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"elsewhere","description":"An agent on another server.","version":"2.0.0",` +
			`"supportedInterfaces":[{"url":"http://elsewhere.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
			`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
			`"skills":[{"id":"s","name":"Somewhere","description":"d","tags":["far"]}]}`))
	}))
	t.Cleanup(other.Close)
	g := newTestGateway(t, &Config{CardSigning: &CardSigningConfig{KeyFile: keyFile},
		Push: PushConfig{Enabled: true, Allow: []string{"127.0.0.0/8"}}})
	b := newBrowser(t)
	b.do("open echo", chromedp.Navigate(g.URL()+"/console/agents/echo"))
	b.until("its signature verifies with the gateway's key", `document.querySelector('#card-signature')?.textContent.startsWith('verified: key ') && document.querySelector('#card-signature').textContent.includes("the gateway's key")`)

	b.do("open another agent by URL", chromedp.Navigate(g.URL()+"/console/"), chromedp.SetValue("#external-url", other.URL+"/agent"), chromedp.Click(`form[aria-label="Open an agent by URL"] button`))
	b.until("its card, read by the server", `document.querySelector('h1')?.textContent.includes('/agent') && document.querySelector('main').textContent.includes('An agent on another server.') && document.querySelector('#card-signature')?.textContent === 'not signed'`)
	b.shot("external")
	b.do("open a metadata address", chromedp.Navigate(g.URL()+"/console/external?url="+url.QueryEscape("http://169.254.169.254/latest")))
	b.until("it is refused", `document.querySelector('main .error')?.textContent.includes('not a public address')`)
}
