package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/a2abridge/a2abridge/gateway"
	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"
)

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// versionInfo describes the running binary (a2abridge version --json).
type versionInfo struct {
	// Version is the main module's version: a tag such as "v1.2.0" for
	// `go install …@v1.2.0`, a pseudo-version for builds in a checkout,
	// "(devel)" when the toolchain recorded none.
	Version string `json:"version"`
	// Commit, CommitTime and Modified come from the VCS stamp (vcs.revision,
	// vcs.time, vcs.modified), when the build had one.
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitzero"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	// ProtocolVersions are the A2A protocol versions spoken, newest
	// first; Bindings the protocol bindings each is served over (A2A 1.0
	// §5), streaming by SSE.
	ProtocolVersions []string `json:"a2aProtocolVersions"`
	Bindings         []string `json:"a2aBindings"`
}

// protocolsText names the versions and bindings served, for help and the
// serve banner: "A2A 1.0 and 0.3.0 over JSON-RPC and HTTP+JSON, SSE
// streaming".
func protocolsText() string {
	return "A2A " + strings.Join(gateway.ProtocolVersions(), " and ") + " over JSON-RPC and HTTP+JSON, SSE streaming; A2A 1.0 over gRPC"
}

func buildVersion() versionInfo {
	v := versionInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		ProtocolVersions: gateway.ProtocolVersions(), Bindings: gateway.Bindings()}
	bi, ok := readBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// versionText is what `a2abridge version` and `--version` print.
func versionText() string {
	v := buildVersion()
	var b strings.Builder
	fmt.Fprintf(&b, "a2abridge %s\n", v.Version)
	if v.Commit != "" {
		fmt.Fprintf(&b, "  commit    %s", v.Commit)
		if v.Modified {
			b.WriteString(" (modified)")
		}
		b.WriteByte('\n')
	}
	if v.CommitTime != "" {
		fmt.Fprintf(&b, "  committed %s\n", v.CommitTime)
	}
	fmt.Fprintf(&b, "  go        %s %s\n", v.Go, v.Platform)
	fmt.Fprintf(&b, "  A2A       %s\n", strings.TrimPrefix(protocolsText(), "A2A "))
	return b.String()
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version, and A2A versions and bindings",
		Long: `Print a2abridge's version (the module version the binary was built from),
the commit and its time when the build recorded them (a "modified" mark means
the working tree had uncommitted changes), the Go version and platform, and the
A2A protocol versions it speaks (1.0 and 0.3.0) with their bindings (JSON-RPC
and HTTP+JSON, streaming over SSE). --json prints the same as one JSON object.
a2abridge --version prints the same text.`,
		Example: `  a2abridge version
  a2abridge version --json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if asJSON {
				b, err := json.Marshal(buildVersion(), json.Deterministic(true))
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(stdout, "%s\n", b)
				return err
			}
			_, err := io.WriteString(stdout, versionText())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}
