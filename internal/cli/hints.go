package cli

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
)

// hintsFor returns what to do next after err, one line each: the hints a
// command attached (how to continue with a task), then advice keyed on
// the error's code or HTTP status (never on the server's wording).
// credsGiven says whether the command sent credentials (for HTTP 401).
func hintsFor(err error, credsGiven bool) []string {
	var out []string
	var se *stoppedError
	if errors.As(err, &se) {
		out = append(out, se.hint...)
	}
	var h *hinted
	if errors.As(err, &h) {
		out = append(out, h.hint...)
	}
	var ae *a2a.Error
	var he *client.HTTPError
	var apie *apiError
	switch {
	case errors.As(err, &apie) && apie.status == http.StatusUnauthorized:
		out = append(out, "hint: give the server's admin token (for pairs without an admin block, its auth: token) with --token or $A2ABRIDGE_ADMIN_TOKEN")
	case errors.As(err, &ae) && ae.Code == a2a.CodePushNotificationNotSupported:
		out = append(out, "hint: the server does not accept push notification configs: it must run with --push (or push.enabled: true in its config file)")
	case errors.As(err, &ae) && ae.Code == a2a.CodeInvalidParams && pushURLField(ae.Data):
		out = append(out, "hint: the server refused this webhook URL: a loopback or private address must be allowed on the server with --push-allow HOST:PORT (or push.allow in its config file)")
	case errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized,
		errors.As(err, &ae) && ae.Code == a2a.CodeUnauthenticated:
		if credsGiven {
			out = append(out, "hint: the agent refused the credentials sent: check --token (or $"+envClientToken+", or the profile's token) and --api-key")
		} else {
			out = append(out, "hint: the agent requires credentials: give --token TOKEN (or set $"+envClientToken+", or use a --profile with a token), or --api-key KEY")
		}
	case errors.As(err, &ae) && ae.Code == a2a.CodeRateLimited,
		errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests:
		out = append(out, "hint: the agent limits how often a caller may call it, and this command already waited and retried: try again later, or ask its operator about its limits")
	case errors.As(err, &he) && he.StatusCode == http.StatusForbidden:
		out = append(out, "hint: the agent refused access with these credentials (HTTP 403)")
	case errors.As(err, &he) && he.StatusCode == http.StatusNotFound:
		if agents := hostedAgents(he.Body); len(agents) > 0 {
			out = append(out, "hint: no agent by that name is hosted there; the server hosts:")
			for _, a := range agents {
				out = append(out, "  "+a)
			}
		} else {
			out = append(out, "hint: nothing answers at this URL: give the agent's base URL (a2abridge serve: http://HOST:PORT/a2a/NAME) or its card URL")
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		addr := "that address"
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Addr != nil {
			addr = oe.Addr.String()
		}
		out = append(out, fmt.Sprintf("hint: nothing is listening at %s: is the server running at that address? (a2abridge serve listens on 127.0.0.1:8080 by default)", addr))
	default:
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			out = append(out, fmt.Sprintf("hint: the host name %q does not resolve: check the URL", de.Name))
		}
	}
	return out
}

// hostedAgents reads the agents an a2abridge server lists in its 404 for
// an unknown agent ({"agents":[{"name","url"},…]}): "NAME  URL" each, at
// most 20 (and a count of the rest); nil for any other body.
func hostedAgents(body string) []string {
	var b struct {
		Agents []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"agents"`
	}
	if json.Unmarshal([]byte(body), &b) != nil {
		return nil
	}
	var out []string
	for i, a := range b.Agents {
		if i == 20 {
			out = append(out, fmt.Sprintf("… and %d more", len(b.Agents)-20))
			break
		}
		out = append(out, oneLine(a.Name)+"  "+oneLine(a.URL))
	}
	return out
}

// pushURLField reports whether -32602 data names a push notification
// config's url (message/send's configuration or pushNotificationConfig/set).
func pushURLField(data any) bool {
	m, ok := data.(map[string]any)
	if !ok {
		return false
	}
	f, _ := m["field"].(string)
	return strings.HasSuffix(f, "pushNotificationConfig/url")
}
