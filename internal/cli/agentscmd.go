package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/a2abridge/a2abridge/gateway"
	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// newAgentsCmd is `a2abridge agents add|list|rm`: the client of serve's
// admin API (admin.go).
func newAgentsCmd(stdout, stderr io.Writer) *cobra.Command {
	var server, token string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Add, list and remove the agents of a running serve (its admin API)",
		Long: `Add, list and remove agents while a2abridge serve runs, through its admin
API (/api/v1/agents), which serve turns on when its config file has an admin
block with bearer tokens. Registered agents are kept in the server's store
and are back after a restart; agents of the config file are listed read-only.

The admin token comes from --token or $A2ABRIDGE_ADMIN_TOKEN.`,
		Example: `  a2abridge agents list --server http://127.0.0.1:8080
  a2abridge agents add weather --kind http --url http://127.0.0.1:9000/run
  a2abridge agents add remote --kind a2a --url https://agent.example.com --set timeout=30s
  a2abridge agents add -f agent.yaml
  a2abridge agents rm weather`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&server, "server", "http://127.0.0.1:8080", "base URL of the a2abridge serve")
	pf.StringVar(&token, "token", "", "admin bearer token (default: $A2ABRIDGE_ADMIN_TOKEN)")
	pf.BoolVar(&asJSON, "json", false, "print the admin API's JSON answer")

	call := func(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
		tok := token
		if tok == "" {
			tok = os.Getenv("A2ABRIDGE_ADMIN_TOKEN")
		}
		if tok == "" {
			if _, err := apiURL(server); err != nil {
				return nil, 0, err
			}
			return nil, 0, usageError{fmt.Errorf("no admin token: pass --token or set A2ABRIDGE_ADMIN_TOKEN")}
		}
		return callAPI(ctx, server, tok, method, gateway.AdminPath+path, body,
			"has no admin API (serve turns it on with an admin block in its config file)")
	}

	printAgents := func(list []gateway.AgentInfo) {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tSOURCE\tURL\tSTATUS")
		for _, a := range list {
			status := "serving"
			switch {
			case a.Removed:
				status = "removed (its tasks stay readable; rm again to delete them from reach)"
			case !a.Running:
				status = "not running: " + a.Problem
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Kind, a.Source, a.URL, status)
		}
		_ = tw.Flush()
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the agents of the server",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, _, err := call(c.Context(), "GET", "", nil)
			if err != nil {
				return err
			}
			if asJSON {
				_, err := stdout.Write(b)
				return err
			}
			var out struct {
				Agents []gateway.AgentInfo `json:"agents"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				return fmt.Errorf("the server's answer: %w", err)
			}
			printAgents(out.Agents)
			return nil
		},
	}

	var kind, agentURL, file string
	var sets []string
	add := &cobra.Command{
		Use:   "add [NAME] (--kind KIND [--url URL] [--set KEY=VALUE]… | -f FILE)",
		Short: "Register an agent (kinds: http, a2a, openai, and those the server's admin.kinds allows)",
		Long: `Register an agent with the server. Either give its name, --kind and its keys
(--url, and --set KEY=VALUE for any other key of the kind, VALUE read as
YAML: --set timeout_ms=5000, --set 'models=[m1, m2]'), or -f FILE with the
agent as YAML or JSON: our kinds ({name, kind, …}, the keys of the config
file's agents entries) or the registry format ({name, url, protocol:
simple-a2a|jsonrpc-2.0, protocol_config, auth_type, timeout_ms}).
Values may reference the server's environment as ${NAME} (only the variables its admin.env lists).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			spec := map[string]any{}
			if file != "" {
				if kind != "" || agentURL != "" || len(sets) > 0 {
					return usageError{fmt.Errorf("-f FILE gives the whole agent: leave out --kind, --url and --set")}
				}
				raw, err := os.ReadFile(file)
				if err != nil {
					return usageError{err}
				}
				if err := yaml.Unmarshal(raw, &spec); err != nil {
					return usageError{fmt.Errorf("%s: %w", file, err)}
				}
				if len(args) == 1 {
					spec["name"] = args[0]
				}
			} else {
				if len(args) != 1 || kind == "" {
					return usageError{fmt.Errorf("give the agent's NAME and --kind (or -f FILE)")}
				}
				spec["name"], spec["kind"] = args[0], kind
				if agentURL != "" {
					spec["url"] = agentURL
				}
				for _, kv := range sets {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return usageError{fmt.Errorf("--set %q: want KEY=VALUE", kv)}
					}
					var val any
					if err := yaml.Unmarshal([]byte(v), &val); err != nil {
						return usageError{fmt.Errorf("--set %s: %w", k, err)}
					}
					spec[k] = val
				}
			}
			body, err := json.Marshal(spec, json.Deterministic(true))
			if err != nil {
				return usageError{fmt.Errorf("the agent cannot be written as JSON: %w", err)}
			}
			b, _, err := call(c.Context(), "POST", "", body)
			if err != nil {
				return err
			}
			if asJSON {
				_, err := stdout.Write(b)
				return err
			}
			var a gateway.AgentInfo
			if err := json.Unmarshal(b, &a); err != nil {
				return fmt.Errorf("the server's answer: %w", err)
			}
			fmt.Fprintf(stdout, "registered %s (%s) at %s\ncard: %s\n", a.Name, a.Kind, a.URL, a.Card)
			return nil
		},
	}
	add.Flags().StringVar(&kind, "kind", "", "the agent's kind (http, a2a, openai, exec, echo, chat, slow)")
	add.Flags().StringVar(&agentURL, "url", "", "the agent's url key (http, a2a)")
	add.Flags().StringArrayVar(&sets, "set", nil, "another key of the kind: KEY=VALUE, VALUE as YAML (repeatable)")
	add.Flags().StringVarP(&file, "file", "f", "", "the agent as a YAML or JSON file")

	rm := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove a registered agent (its unfinished tasks fail; its tasks stay readable), or a removed agent's tombstone",
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if _, _, err := call(c.Context(), "DELETE", "/"+url.PathEscape(args[0]), nil); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "removed %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(list, add, rm)
	return cmd
}

// apiURL checks --server: an http or https base URL.
func apiURL(server string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Errorf("--server %q: want http://HOST:PORT or https://…", server)}
	}
	return u, nil
}

// callAPI sends one request to an API of serve ({"error": …} bodies: the
// admin and pairs APIs) at server+path, with tok as the bearer token
// when set, and returns the answer's body and status. A status of 300 or
// more is an *apiError; a plain-text 404 (no such route) says that the
// server noAPI.
func callAPI(ctx context.Context, server, tok, method, path string, body []byte, noAPI string) ([]byte, int, error) {
	u, err := apiURL(server)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String()+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode == http.StatusNotFound && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return nil, resp.StatusCode, &apiError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s", u, noAPI)}
	}
	if resp.StatusCode >= 300 {
		var e gateway.AdminErrorBody
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return b, resp.StatusCode, &apiError{status: resp.StatusCode, msg: fmt.Sprintf("%s (HTTP %d)", e.Error, resp.StatusCode)}
		}
		return b, resp.StatusCode, &apiError{status: resp.StatusCode, msg: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, oneLine(strings.TrimSpace(string(b))))}
	}
	return b, resp.StatusCode, nil
}

// apiError is an error status from serve's admin or pairs API. Its exit
// code (exitCode) is ExitUsage for 400 and 413 (the request as given is
// wrong: a bad registration, a body too large) and ExitTransport for any
// other status (401, 404, 409, 5xx…), as for the client commands' HTTP
// errors.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func (e *apiError) exitCode() int {
	switch e.status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return ExitUsage
	}
	return ExitTransport
}
