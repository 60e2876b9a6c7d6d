package simple_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The test backends: a Go one (goBackend) and a Python standard-library
// one (testdata/backend.py) serve the same routes:
//
//	POST /echo           success, output = input
//	POST /string         success, output "plain text"
//	POST /null           success, output null
//	POST /error          status error, "backend says no"
//	POST /error-empty    status error, error null
//	POST /notjson        200 "hello" (text/plain)
//	POST /nostatus       {"task_id", "output": {}}
//	POST /badstatus      status "done"
//	POST /badoutput      success, output [1,2]
//	POST /wrongtask      task_id "someone-else"
//	POST /dupkey         {"status":"success","status":"error"}
//	POST /http500        HTTP 500 with a dialect error "exploded"
//	POST /http400        HTTP 400 "bad input" (text/plain)
//	POST /flaky?fail=N&code=C   HTTP C (503) "busy" for a task's first N calls, then success {"attempts": n}
//	POST /always?code=C  HTTP C (500) "nope", always
//	POST /headers        success, output: the request's credential, custom, idempotency and content-type headers
//	POST /ask            first call of a task: input_required "What is your name?"; then success {"text": "Hello, <input.text>!"}
//	POST /big            success, output a 5000-byte string
//	POST /hang           never answers; notes when the client goes away
//	GET  /attempts?task_id=X      {"n": calls of task X to /flaky, /always, /ask}
//	GET  /keys?task_id=X          {"keys": the Idempotency-Key of each POST of task X, in order}
//	GET  /wait-arrived?task_id=X  answers once X's /hang call arrived
//	GET  /wait-gone?task_id=X     answers once X's /hang call's client went away
type backend struct {
	name string
	url  string
}

// goBackend starts the Go test backend.
func goBackend(t *testing.T) backend {
	t.Helper()
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	attempts := map[string]int{}
	keys := map[string][]string{}
	arrived := map[string]bool{}
	gone := map[string]bool{}
	send := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	text := func(w http.ResponseWriter, code int, s string) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, s)
	}
	dialect := func(tid, status string, output any, errMsg any) map[string]any {
		return map[string]any{"task_id": tid, "status": status, "output": output, "error": errMsg}
	}
	waitFor := func(w http.ResponseWriter, r *http.Request, set map[string]bool, key string) {
		tid := r.URL.Query().Get("task_id")
		mu.Lock()
		for !set[tid] {
			cond.Wait()
		}
		mu.Unlock()
		send(w, 200, map[string]bool{key: true})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /attempts", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := attempts[r.URL.Query().Get("task_id")]
		mu.Unlock()
		send(w, 200, map[string]int{"n": n})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		k := append([]string{}, keys[r.URL.Query().Get("task_id")]...)
		mu.Unlock()
		send(w, 200, map[string][]string{"keys": k})
	})
	mux.HandleFunc("GET /wait-arrived", func(w http.ResponseWriter, r *http.Request) { waitFor(w, r, arrived, "arrived") })
	mux.HandleFunc("GET /wait-gone", func(w http.ResponseWriter, r *http.Request) { waitFor(w, r, gone, "gone") })
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
			Input  any    `json:"input"`
		}
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			text(w, 400, "not a dialect request: "+err.Error())
			return
		}
		tid := req.TaskID
		mu.Lock()
		keys[tid] = append(keys[tid], r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		count := 0
		switch r.URL.Path {
		case "/flaky", "/always", "/ask":
			mu.Lock()
			attempts[tid]++
			count = attempts[tid]
			mu.Unlock()
		}
		q := r.URL.Query()
		intQ := func(k string, def int) int {
			if n, err := strconv.Atoi(q.Get(k)); err == nil {
				return n
			}
			return def
		}
		switch r.URL.Path {
		case "/echo":
			send(w, 200, dialect(tid, "success", req.Input, nil))
		case "/string":
			send(w, 200, dialect(tid, "success", "plain text", nil))
		case "/null":
			send(w, 200, dialect(tid, "success", nil, nil))
		case "/error":
			send(w, 200, dialect(tid, "error", nil, "backend says no"))
		case "/error-empty":
			send(w, 200, dialect(tid, "error", nil, nil))
		case "/notjson":
			text(w, 200, "hello")
		case "/nostatus":
			send(w, 200, map[string]any{"task_id": tid, "output": map[string]any{}})
		case "/badstatus":
			send(w, 200, dialect(tid, "done", nil, nil))
		case "/badoutput":
			send(w, 200, dialect(tid, "success", []int{1, 2}, nil))
		case "/wrongtask":
			send(w, 200, dialect("someone-else", "success", nil, nil))
		case "/dupkey":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":"success","status":"error"}`)
		case "/http500":
			send(w, 500, dialect(tid, "error", nil, "exploded"))
		case "/http400":
			text(w, 400, "bad input")
		case "/flaky":
			if count <= intQ("fail", 2) {
				text(w, intQ("code", 503), "busy")
				return
			}
			send(w, 200, dialect(tid, "success", map[string]int{"attempts": count}, nil))
		case "/always":
			text(w, intQ("code", 500), "nope")
		case "/headers":
			h := r.Header
			send(w, 200, dialect(tid, "success", map[string]string{
				"authorization":   h.Get("Authorization"),
				"api_key":         h.Get("X-Api-Key"),
				"custom":          h.Get("X-Custom"),
				"idempotency_key": h.Get("Idempotency-Key"),
				"content_type":    h.Get("Content-Type"),
			}, nil))
		case "/ask":
			if count == 1 {
				send(w, 200, dialect(tid, "input_required", nil, "What is your name?"))
				return
			}
			name := ""
			if m, ok := req.Input.(map[string]any); ok {
				name, _ = m["text"].(string)
			}
			send(w, 200, dialect(tid, "success", map[string]string{"text": "Hello, " + name + "!"}, nil))
		case "/big":
			send(w, 200, dialect(tid, "success", strings.Repeat("x", 5000), nil))
		case "/hang":
			mu.Lock()
			arrived[tid] = true
			cond.Broadcast()
			mu.Unlock()
			<-r.Context().Done()
			mu.Lock()
			gone[tid] = true
			cond.Broadcast()
			mu.Unlock()
		default:
			send(w, 404, map[string]string{"error": "no such route"})
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return backend{name: "go", url: srv.URL}
}

// pythonBackend starts testdata/backend.py, or skips the test when
// python3 is not installed.
func pythonBackend(t *testing.T) backend {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python backend tests are skipped (CI has it)")
	}
	cmd := exec.Command(py, "testdata/backend.py")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the script exits when its stdin closes
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("python backend did not start: %v", err)
	}
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "PORT ")
	if !ok {
		t.Fatalf("python backend said %q, want PORT <n>", line)
	}
	return backend{name: "python", url: "http://" + net.JoinHostPort("127.0.0.1", port)}
}

// get GETs one of a backend's GET routes and decodes its JSON.
func (b backend) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(b.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func (b backend) attempts(t *testing.T, taskID string) int {
	var v struct{ N int }
	b.get(t, "/attempts?task_id="+taskID, &v)
	return v.N
}

// keys are the Idempotency-Keys of the backend's calls for a task.
func (b backend) keys(t *testing.T, taskID string) []string {
	var v struct{ Keys []string }
	b.get(t, "/keys?task_id="+taskID, &v)
	return v.Keys
}

func (b backend) String() string { return fmt.Sprintf("%s backend at %s", b.name, b.url) }
