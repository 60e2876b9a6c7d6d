package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/pair"
)

// pairsAPIPath is where serve mounts the pairs API (startPairs).
const pairsAPIPath = "/api/pairs"

// newPairsCmd is `a2abridge pairs create|list|end`: the client of serve's
// pairs API (bridge/pair, mounted by startPairs).
func newPairsCmd(stdout io.Writer) *cobra.Command {
	var server, token string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pairs",
		Short: "Create, list and end paired participants on a running serve (its pairs API)",
		Long: `Create, list and end pairs on a2abridge serve, through its pairs API
(/api/pairs), which serve turns on with pairs.enabled in its config file. A pair
is two A2A endpoints whose messages are passed to each other: hand one URL to
each participant (see the README, "Paired participants").

The API requires the admin bearer token when serve has an admin block, else its
default authentication (auth:, --auth-token), else nothing. The token comes from
--token or $A2ABRIDGE_ADMIN_TOKEN.`,
		Example: `  a2abridge pairs create --server http://127.0.0.1:8080
  a2abridge pairs list
  a2abridge pairs end Xq3… --outcome completed`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&server, "server", "http://127.0.0.1:8080", "base URL of the a2abridge serve")
	pf.StringVar(&token, "token", "", "bearer token of the pairs API (default: $A2ABRIDGE_ADMIN_TOKEN)")
	pf.BoolVar(&asJSON, "json", false, "print the pairs API's JSON answer")

	call := func(ctx context.Context, method, path string) ([]byte, error) {
		tok := token
		if tok == "" {
			tok = os.Getenv("A2ABRIDGE_ADMIN_TOKEN")
		}
		b, _, err := callAPI(ctx, server, tok, method, pairsAPIPath+path, nil,
			"has no pairs API (serve turns it on with pairs.enabled in its config file)")
		return b, err
	}
	// answer prints b as it came (--json) or decodes it into v.
	answer := func(b []byte, v any) (printed bool, err error) {
		if asJSON {
			_, err := stdout.Write(b)
			return true, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return false, fmt.Errorf("the server's answer: %w", err)
		}
		return false, nil
	}

	create := &cobra.Command{
		Use:   "create",
		Short: "Create a pair: two A2A endpoints, one per participant",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := call(c.Context(), "POST", "")
			if err != nil {
				return err
			}
			var p pair.Info
			if printed, err := answer(b, &p); printed || err != nil {
				return err
			}
			fmt.Fprintf(stdout, "pair %s %s\n", p.ID, p.State)
			fmt.Fprintf(stdout, "  side A  %s\n  side B  %s\n  events  %s\n", p.A.URL, p.B.URL, p.Events)
			fmt.Fprintf(stdout, "side A speaks first:  a2abridge send %s TEXT\n", p.A.URL)
			fmt.Fprintf(stdout, "end it:               a2abridge pairs end %s --server %s\n", p.ID, server)
			return nil
		},
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the pairs: open ones and ended ones still served",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := call(c.Context(), "GET", "")
			if err != nil {
				return err
			}
			var out struct {
				Pairs []pair.Info `json:"pairs"`
			}
			if printed, err := answer(b, &out); printed || err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PAIR\tSTATE\tTURNS\tCREATED\tSIDE A")
			for _, p := range out.Pairs {
				state := p.State
				if p.Outcome != a2a.TaskStateUnspecified {
					state += " (" + p.Outcome.String() + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", p.ID, state, p.Turns, p.Created.UTC().Format(time.RFC3339), p.A.URL)
			}
			_ = tw.Flush()
			return nil
		},
	}

	var outcome, reason string
	end := &cobra.Command{
		Use:   "end PAIR",
		Short: "End a pair: both participants' tasks end (canceled unless --outcome)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			switch outcome {
			case "canceled", "completed", "failed":
			default:
				return usageError{fmt.Errorf("--outcome %q: want canceled, completed or failed", outcome)}
			}
			q := url.Values{"outcome": {outcome}}
			if reason != "" {
				q.Set("reason", reason)
			}
			b, err := call(c.Context(), "DELETE", "/"+url.PathEscape(args[0])+"?"+q.Encode())
			if err != nil {
				return err
			}
			var p pair.Info
			if printed, err := answer(b, &p); printed || err != nil {
				return err
			}
			fmt.Fprintf(stdout, "ended pair %s: both tasks %s\n", p.ID, p.Outcome)
			return nil
		},
	}
	end.Flags().StringVar(&outcome, "outcome", "canceled", "the state both tasks end in: canceled, completed or failed")
	end.Flags().StringVar(&reason, "reason", "", "the ended tasks' status message (default: ended through the pairs API)")
	cmd.AddCommand(create, list, end)
	return cmd
}
