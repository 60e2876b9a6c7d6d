package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/bridge/conversation"
	"github.com/a2abridge/a2abridge/gateway"
)

// newScenarioCmd is `a2abridge scenario encode|decode`: a scenario file to
// its config64 and back.
func newScenarioCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scenario",
		Short: "Encode a conversation scenario (YAML or JSON) as a config64, or decode one",
		Long: `A conversation scenario (title, agents, startingAgentId, rules) is served as one
A2A agent at /api/bridge/{config64}/a2a, where config64 is the base64url (no
padding) of the scenario's JSON. encode validates a scenario file and prints its
config64 (after checking each participant's kind and config keys as serve
will); decode prints a config64's scenario as JSON (the config64 alone, or a
URL that holds /api/bridge/{config64}/a2a). Whether a server accepts the
scenario also depends on what its operator allowed (conversations.kinds, urls).`,
		Example: `  a2abridge scenario encode examples/conversations/relay-adhoc.json
  curl -s http://127.0.0.1:8080/api/bridge/$(a2abridge scenario encode examples/conversations/relay-adhoc.json)/a2a/diag
  a2abridge scenario decode eyJ0aXRsZSI6…`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "encode FILE",
		Short: "Print the config64 of a scenario file (YAML or JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := gateway.LoadScenario(args[0])
			if err != nil {
				return usageError{err}
			}
			_, err = fmt.Fprintln(stdout, conversation.EncodeConfig64(s))
			return err
		},
	})
	var maxBytes int
	dec := &cobra.Command{
		Use:   "decode CONFIG64|URL",
		Short: "Print a config64's scenario as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c := args[0]
			if _, rest, ok := strings.Cut(c, "/api/bridge/"); ok {
				c, _, _ = strings.Cut(rest, "/")
			}
			s, err := conversation.DecodeConfig64(c, maxBytes)
			if err != nil {
				return usageError{err}
			}
			v := jsontext.Value(s.JSON())
			if err := v.Indent(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", v)
			return err
		},
	}
	dec.Flags().IntVar(&maxBytes, "max-bytes", 1<<20, "most bytes of scenario JSON to accept")
	cmd.AddCommand(dec)
	return cmd
}
