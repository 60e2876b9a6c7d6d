package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
	"github.com/a2abridge/a2abridge/push"
)

// listenCmd is `a2abridge push listen`: a local webhook receiver that
// verifies and prints push notifications (A2A 0.3.0 §9.5).
func (e *clientEnv) listenCmd() *cobra.Command {
	var addr, jwksURL, serverURL, token, audience, issuer string
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive push notifications on a local webhook, verify and print them",
		Long: `Receive push notifications on a local webhook, verify and print them.

Give the sender's JWKS (--jwks URL, or --server BASE_URL for an a2abridge
server, whose keys are at BASE_URL/.well-known/jwks.json) to verify each
notification's JWT: signature, freshness (iat/exp), replay (jti), body hash
and audience (the URL the notification was posted to, unless --audience).
--push-token also checks the X-A2A-Notification-Token header. Rejected
notifications are answered 401 and printed as such.

The banner ("listening on …") goes to stderr, so stdout holds only the
notifications: one line each, or with --json (the default when stdout is not a
terminal) one JSON object each: {"received":RFC3339 time,"task":TASK,
"verdict":"verified (…)" | "not verified" | "REJECTED: …"} ("body" instead of
"task" when the body is not JSON).`,
		Example: `  a2abridge push listen --addr 127.0.0.1:9000 --server http://127.0.0.1:8080 --push-token t0k
  a2abridge push listen --jwks https://agents.example.com/.well-known/jwks.json --json > notifications.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serverURL != "" && jwksURL == "" {
				u, err := normalizeURL(serverURL)
				if err != nil {
					return usageError{fmt.Errorf("--server: %w", err)}
				}
				jwksURL = strings.TrimRight(u, "/") + "/.well-known/jwks.json"
			} else if jwksURL != "" {
				u, err := normalizeURL(jwksURL)
				if err != nil {
					return usageError{fmt.Errorf("--jwks: %w", err)}
				}
				jwksURL = u
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			defer ln.Close()
			base := "http://" + ln.Addr().String()
			// One verifier (one key cache, one replay cache); the audience is
			// checked below, against --audience or the path posted to.
			verifier := push.NewVerifier(push.VerifierOptions{JWKSURL: jwksURL, Issuer: issuer})
			verifying := "not verifying signatures (no --jwks or --server)"
			if jwksURL != "" {
				verifying = "verifying with " + jwksURL
			}
			fmt.Fprintf(e.stderr, "listening on %s (%s); use %s/hook as the push URL\n", base, verifying, base)
			var out sync.Mutex
			srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.Header().Set("Allow", http.MethodPost)
					http.Error(w, "POST notifications here", http.StatusMethodNotAllowed)
					return
				}
				body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20+1))
				if err != nil || len(body) > 10<<20 {
					http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
					return
				}
				var verdict string
				status := http.StatusOK
				if token != "" && !push.TokenEqual(r, token) {
					verdict, status = "REJECTED: wrong or missing "+push.HeaderNotificationToken, http.StatusUnauthorized
				}
				if status == http.StatusOK && jwksURL != "" {
					claims, err := verifier.Verify(r, body)
					switch {
					case errors.Is(err, push.ErrKeysUnavailable):
						verdict, status = "REJECTED: "+err.Error(), http.StatusServiceUnavailable
					case err != nil:
						verdict, status = "REJECTED: "+err.Error(), http.StatusUnauthorized
					case !audienceOK(claims.Audience, audience, r):
						verdict, status = fmt.Sprintf("REJECTED: audience %q is not this webhook", claims.Audience), http.StatusUnauthorized
					default:
						verdict = fmt.Sprintf("verified (iss %s, jti %s)", claims.Issuer, claims.JTI)
					}
				} else if status == http.StatusOK {
					verdict = "not verified"
				}
				out.Lock()
				e.printNotification(body, verdict)
				out.Unlock()
				w.WriteHeader(status)
			})}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-cmd.Context().Done():
				return srv.Close()
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:9000", "listen address")
	f.StringVar(&jwksURL, "jwks", "", "JWKS URL of the sender's signing keys")
	f.StringVar(&serverURL, "server", "", "base URL of an a2abridge server (its JWKS is at /.well-known/jwks.json)")
	f.StringVar(&token, "push-token", "", "expected X-A2A-Notification-Token")
	f.StringVar(&audience, "audience", "", "expected JWT audience (default: the URL each notification was posted to)")
	f.StringVar(&issuer, "issuer", "", "expected JWT issuer (default: not checked)")
	return cmd
}

// audienceOK checks a notification's aud: exactly want when given, else a
// URL whose path is the one the notification was posted to (the host part
// may be any name of this listener).
func audienceOK(aud, want string, r *http.Request) bool {
	if want != "" {
		return aud == want
	}
	u, err := url.Parse(aud)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.RequestURI() == r.URL.RequestURI()
}

// printNotification shows one received notification.
func (e *clientEnv) printNotification(body []byte, verdict string) {
	if e.jsonOut() {
		line := map[string]any{"verdict": verdict, "received": time.Now().UTC().Format(time.RFC3339Nano)}
		if v := jsontext.Value(bytes.TrimSpace(body)); v.IsValid() {
			line["task"] = v // as received: numbers keep their text
		} else {
			line["body"] = string(body)
		}
		b, _ := json.Marshal(line, json.Deterministic(true))
		fmt.Fprintf(e.stdout, "%s\n", b)
		return
	}
	line, ok := notificationLine(body)
	if !ok {
		fmt.Fprintf(e.stdout, "%s  notification (not a Task or StreamResponse): %s  [%s]\n", time.Now().Format("15:04:05.000"), oneLine(string(body[:min(len(body), 200)])), oneLine(verdict))
		return
	}
	fmt.Fprintf(e.stdout, "%s  [%s]\n", oneLine(time.Now().Format("15:04:05.000")+"  "+line), oneLine(verdict))
}

// notificationLine describes a notification's body: an A2A 0.3 Task (A2A
// 0.3.0 §9.5) or an A2A 1.0 StreamResponse (A2A 1.0 §4.3.3): a Task, a
// status update or an artifact update.
func notificationLine(body []byte) (string, bool) {
	ev, err := v03.UnmarshalEvent(body)
	if _, isTask := ev.(*a2a.Task); err != nil || !isTask {
		if ev, err = v10.UnmarshalStreamResponse(body); err != nil {
			return "", false
		}
	}
	switch v := ev.(type) {
	case *a2a.Task:
		line := fmt.Sprintf("task %s %s", v.ID, v.Status.State)
		if v.Status.Message != nil {
			line += ": " + partsText(v.Status.Message.Parts)
		}
		if n := len(v.Artifacts); n > 0 {
			line += fmt.Sprintf("  (%d artifact(s))", n)
		}
		return line, true
	case *a2a.TaskStatusUpdateEvent:
		line := fmt.Sprintf("task %s %s", v.TaskID, v.Status.State)
		if v.Status.Message != nil {
			line += ": " + partsText(v.Status.Message.Parts)
		}
		return line, true
	case *a2a.TaskArtifactUpdateEvent:
		return fmt.Sprintf("task %s artifact %s%s", v.TaskID, artifactLabel(&v.Artifact), partsText(v.Artifact.Parts)), true
	}
	return "", false
}

// oneLine is printable with line breaks (and bidi/format characters)
// escaped: a notification's text cannot forge extra output lines.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return '⏎'
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return '�'
		}
		return r
	}, s)
}
