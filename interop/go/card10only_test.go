package interop

import (
	"io"
	"net/http"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestCard10OnlyStrictProtoJSON: with `serve --protocols 1.0` every card
// is the A2A 1.0 AgentCard alone, which the message a2a-go v2 generated
// from the official a2a.proto (lf.a2a.v1.AgentCard) reads with
// protojson's strict defaults (an unknown field is an error), with and
// without security requirements; the default card, which also carries
// A2A 0.3's members, is refused by the same parser.
func TestCard10OnlyStrictProtoJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		strict bool
	}{
		{"1.0 only", []string{"--memory", "--protocols", "1.0"}, true},
		{"1.0 only, authenticated", []string{"--memory", "--protocols", "1.0", "--auth-token", "alice=s3cret-token-0123456789"}, true},
		{"1.0 and 0.3", []string{"--memory"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := startServer(t, tc.args...).base
			for _, path := range []string{"/.well-known/agent-card.json", "/a2a/echo/.well-known/agent-card.json", "/a2a/chat/.well-known/agent-card.json"} {
				resp, err := http.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
				}
				var card a2apb.AgentCard
				err = protojson.Unmarshal(body, &card)
				switch {
				case tc.strict && err != nil:
					t.Fatalf("%s: protojson refuses the 1.0-only card: %v\n%s", path, err, body)
				case tc.strict && (card.GetName() == "" || len(card.GetSupportedInterfaces()) == 0):
					t.Fatalf("%s: read as %v", path, &card)
				case tc.strict && strings.Contains(tc.name, "authenticated") && len(card.GetSecurityRequirements()) == 0:
					t.Fatalf("%s: no security requirements read: %s", path, body)
				case !tc.strict && err == nil:
					t.Fatalf("%s: protojson accepts a card with 0.3 members: %s", path, body)
				}
			}
		})
	}
}
