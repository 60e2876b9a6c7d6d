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
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// rpc calls an A2A 1.0 JSON-RPC method of url and decodes its result.
func rpc(t *testing.T, url, method string, params, result any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %v", method, err, out.Error)
	}
	if err := json.Unmarshal(out.Result, result); err != nil {
		t.Fatal(err)
	}
}

func TestConsoleInBrowser(t *testing.T) {
	g := newTestGateway(t, &Config{})
	b := newBrowser(t)
	base := g.URL()

	// The agents.
	b.do("open the console", chromedp.Navigate(base+"/console/"))
	b.until("the agents are listed", `document.querySelectorAll('ul.cards li').length === 3 && document.querySelector('a[href="/console/agents/slow"]') !== null`)
	b.until("their cards are shown", `[...document.querySelectorAll('ul.cards li')].every((li) => li.textContent.includes('JSONRPC 1.0'))`)
	b.shot("agents")

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

	// The task, opened by its link in a fresh page load.
	b.do("open the task by its link", chromedp.Navigate(base+href))
	b.until("the task page", `document.querySelector('#task-state .state')?.textContent === 'completed'`)
	b.until("its event log", `document.querySelectorAll('.timeline li').length >= 3 && document.querySelector('.timeline').textContent.includes('completed')`)
	b.until("its artifact", `document.querySelector('main').textContent.includes('hello console')`)
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
	b.do("cancel it", chromedp.Click(`//button[text()="Cancel task"]`))
	b.until("it ends canceled", `document.querySelector('#task-state .state')?.textContent === 'canceled'`)
	b.until("the event log ends", `document.querySelector('.timeline').textContent.includes('canceled')`)
	b.shot("task-canceled")

	// The tasks of slow, filtered by state.
	b.do("open slow's tasks", chromedp.Navigate(base+"/console/agents/slow/tasks"))
	b.until("the canceled task is listed", fmt.Sprintf(`document.querySelector('a[href="/console/agents/slow/tasks/%s"]') !== null`, task.ID))
	b.shot("tasks")

	// A phone's width: nothing is wider than the screen.
	b.do("a phone's width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/console/agents/echo"))
	b.until("echo's page on a phone", `document.querySelector('#chat-text') !== null && document.querySelector('.log') !== null`)
	b.until("nothing wider than the screen", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.shot("phone")
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
	b.do("send with the token", chromedp.SendKeys("#chat-text", "now with a token"), chromedp.Click(`form[aria-label="Chat with echo"] button[type="submit"]`))
	b.until("the echo completes", `document.querySelector('#chat-status .state')?.textContent === 'completed'`)
	b.until("the token is not shown in the raw exchanges", `![...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('s3cret-console')) && [...document.querySelectorAll('.log pre')].some((p) => p.textContent.includes('Authorization: Bearer …'))`)
	b.do("open echo's tasks", chromedp.Navigate(g.URL()+"/console/agents/echo/tasks"))
	b.until("the task is listed, with the token", `document.querySelectorAll('tbody tr').length === 1`)
	b.shot("auth-tasks")
}
