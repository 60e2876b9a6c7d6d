package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/gateway"
	"github.com/a2abridge/a2abridge/server"
)

// newServeCmd is `a2abridge serve`: its flags become gateway.Overrides
// over the --config file, and the gateway runs until a signal.
func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		logLevel, configPath, memoryCap, cpuProfile, memProfile string
		protocols                                               []string
		ov                                                      gateway.Overrides
		given                                                   []func(*pflag.FlagSet)
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host agents over A2A 1.0 and 0.3: built-in ones and bridges (http, openai, exec, a2a)",
		Long: `Host agents over A2A 1.0 and 0.3 (JSON-RPC and HTTP+JSON, SSE streaming): the
built-in echo, chat and slow, and the agents of --config: bridges to an HTTP
service (kind http), an OpenAI-compatible endpoint (openai), a command (exec)
or a remote A2A agent (a2a), and conversations of several of them behind one
task (kind conversation; ad-hoc scenarios at /api/bridge/{config64}/a2a with
the conversations block, see a2abridge scenario).

Each agent answers at POST /a2a/{name} with its card at
GET /a2a/{name}/.well-known/agent-card.json; the default agent also answers at
POST / and GET /.well-known/agent-card.json. The same port serves A2A 1.0 over
gRPC (lf.a2a.v1.A2AService, cleartext HTTP/2; a request's tenant names its
agent, as the GRPC interface of each card says; --grpc-addr adds a port for
gRPC alone, --grpc=false turns it off). Tasks are kept in SQLite under
--data (durable across restarts and kill -9) unless --memory is given; a
second serve on the same --data refuses to start (exit 1) while the first runs.
--postgres DSN keeps them in PostgreSQL instead (the config file's
postgres.dsn, with ${NAME} for the password; PGPASSWORD and ~/.pgpass work
too), one serve per database schema as with --data.

--config FILE (YAML, see examples/secure.yaml and examples/bridges/) declares
agents, authentication per agent, extended cards, push notifications and the
admin API (/api/v1/agents); flags override it. An unknown
key in the file is an error naming its line and the closest valid key.
SIGINT or SIGTERM shuts down gracefully; a second Ctrl-C exits at once.`,
		Example: `  a2abridge serve
  a2abridge serve --addr 0.0.0.0:8080 --public-url https://agents.example.com --data /var/lib/a2abridge
  a2abridge serve --memory --push --push-allow 127.0.0.1:9000
  a2abridge serve --postgres 'postgres://a2a@db.internal:5432/a2a?sslmode=require'
  A2ABRIDGE_TOKEN=s3cret a2abridge serve --config examples/secure.yaml
  a2abridge serve --config examples/bridges/exec.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError{fmt.Errorf("--log-level: %w", err)}
			}
			// Records logged in a request's context name its trace (trace_id).
			log := slog.New(server.NewLogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})))
			var file *gateway.Config
			if configPath != "" {
				f, err := gateway.LoadConfig(configPath)
				if err != nil {
					return usageError{fmt.Errorf("--config: %w", err)}
				}
				file = f
			}
			capBytes, err := gateway.ParseSize(memoryCap)
			if err != nil {
				return usageError{fmt.Errorf("--memory-cap: %w", err)}
			}
			fl := cmd.Flags()
			for _, g := range given {
				g(fl)
			}
			if fl.Changed("memory-cap") {
				ov.MemoryCap = &capBytes
			}
			if fl.Changed("protocols") {
				ov.Protocols = append([]string{}, protocols...)
			}
			g, err := gateway.New(cmd.Context(), file, gateway.Options{Logger: log, Overrides: &ov, ConfigName: "--config"})
			var ce *gateway.ConfigError
			if errors.As(err, &ce) {
				return usageError{ce.Err}
			} else if err != nil {
				return err
			}
			// The profiles cover the serving, from the first request to
			// the end of the shutdown; a configuration error comes first.
			if cpuProfile != "" || memProfile != "" {
				stop, err := startProfiles(cpuProfile, memProfile)
				if err != nil {
					_ = g.Close()
					return err
				}
				defer stop()
			}
			served := "A2A " + strings.Join(gateway.ProtocolVersions(), " and ") + " over JSON-RPC and HTTP+JSON, SSE streaming"
			if slices.Contains(g.ServedBindings(), a2a.TransportGRPC) {
				at := g.Addr().String()
				if a := g.GRPCAddr(); a != nil {
					at += " and " + a.String()
				}
				served += "; A2A 1.0 over gRPC at " + at
			}
			scheme := "http"
			if g.ServesTLS() {
				scheme = "https"
			}
			fmt.Fprintf(stdout, "a2abridge listening on %s://%s (%s; default agent %q; agents: ", scheme, g.Addr(), served, g.DefaultAgent())
			for i, a := range g.Agents() {
				if i > 0 {
					fmt.Fprint(stdout, ", ")
				}
				fmt.Fprintf(stdout, "%s/a2a/%s", g.URL(), a)
			}
			fmt.Fprintln(stdout, ")")
			if u := g.ConsoleURL(); u != "" {
				fmt.Fprintf(stdout, "console at %s\n", u)
			}
			return g.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML configuration file (auth, extended cards, push); flags override it")
	flag(f, &given, f.StringVar, &ov.Addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free port)")
	flag(f, &given, f.StringVar, &ov.Data, "data", gateway.DefaultDataDir(), "directory of the SQLite database (and push signing keys)")
	flag(f, &given, f.BoolVar, &ov.Memory, "memory", false, "keep tasks in memory only (lost on exit)")
	flag(f, &given, f.StringVar, &ov.Postgres, "postgres", "", "keep tasks in the PostgreSQL database of this DSN (postgres://USER[:PASSWORD]@HOST:PORT/DB?sslmode=...; pool_max_conns etc.) instead of SQLite")
	flag(f, &given, f.BoolVar, &ov.Replica, "replica", false, "run as one of several serve replicas on the --postgres database (behind a load balancer): any request on any replica; every replica runs with --replica and the same agents")
	flag(f, &given, f.DurationVar, &ov.Lease, "lease", server.DefaultLeaseTime, "with --postgres: how long the tasks a replica was running outlive its last sign of life before another replica fails them")
	flag(f, &given, f.DurationVar, &ov.Retention, "retain", gateway.DefaultRetention, "keep finished tasks this long, then delete them with their events (0: forever)")
	flag(f, &given, f.DurationVar, &ov.ShutdownGrace, "shutdown-grace", gateway.DefaultShutdownGrace, "at SIGTERM or SIGINT, how long running tasks may finish before they are failed")
	f.StringVar(&memoryCap, "memory-cap", "256MiB", "with --memory: most bytes finished tasks may hold; the oldest go first (0: no cap)")
	flag(f, &given, f.StringVar, &ov.Default, "default", "echo", "agent that also answers at / (a built-in or a configured agent)")
	flag(f, &given, f.StringVar, &ov.PublicURL, "public-url", "", "base URL written into agent cards (default: an allowed Host, a trusted proxy's forwarded host, or the address the connection reached)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	flag(f, &given, f.Int64Var, &ov.MaxBody, "max-body", server.DefaultMaxBodyBytes, "request body limit in bytes")
	flag(f, &given, f.IntVar, &ov.MaxBatch, "max-batch", server.DefaultMaxBatch, "most requests in one JSON-RPC batch; a larger batch gets one -32600 error and none of it runs")
	flag(f, &given, f.DurationVar, &ov.BodyReadTimeout, "body-read-timeout", server.DefaultBodyReadTimeout, "time a client has to send a request body; a slower one gets HTTP 408 (0: no limit)")
	f.StringArrayVar(&ov.TrustedProxies, "trusted-proxy", nil, "reverse proxy whose X-Forwarded-Host/-Proto and Forwarded headers are believed: CIDR or IP (repeatable)")
	f.StringArrayVar(&ov.AllowedHosts, "allowed-host", nil, "Host header that may be written into agent cards: HOST or HOST:PORT (repeatable; default: loopback names only)")
	flag(f, &given, f.DurationVar, &ov.CardMaxAge, "card-max-age", server.DefaultCardMaxAge, "how long clients and caches may reuse an agent card without asking again (Cache-Control max-age; 0: revalidate every time)")
	f.StringSliceVar(&protocols, "protocols", []string{"1.0", "0.3"}, "A2A versions served: 1.0, 0.3 or both (comma-separated); requests of another get VersionNotSupportedError, and with 1.0 alone the card is a strict A2A 1.0 AgentCard")
	flag(f, &given, f.DurationVar, &ov.KeepAlive, "keep-alive", server.DefaultKeepAlive, "SSE keep-alive comment interval")
	flag(f, &given, f.BoolVar, &ov.GRPC, "grpc", true, "serve the gRPC binding of A2A 1.0 on --addr (cleartext HTTP/2 beside HTTP/1.1); a request's tenant names its agent")
	flag(f, &given, f.StringVar, &ov.GRPCAddr, "grpc-addr", "", "also serve gRPC alone on this HOST:PORT; cards then name its port")
	flag(f, &given, f.StringVar, &ov.TLSCert, "tls-cert", "", "serve HTTPS (and gRPC over TLS) on --addr with this PEM certificate chain (with --tls-key)")
	flag(f, &given, f.StringVar, &ov.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	flag(f, &given, f.StringVar, &ov.GRPCPublicAddr, "grpc-public-addr", "", "gRPC target written into agent cards, HOST:PORT (default: the cards' host with the gRPC port)")
	f.StringArrayVar(&ov.AuthTokens, "auth-token", nil, "require bearer authentication on every agent: SUBJECT=TOKEN (repeatable)")
	flag(f, &given, f.BoolVar, &ov.Push, "push", false, "enable push notifications (signed with keys kept under --data)")
	f.StringArrayVar(&ov.PushAllow, "push-allow", nil, "webhook targets allowed although private or loopback: CIDR, IP[:PORT], HOST[:PORT] or *.DOMAIN (repeatable; implies --push)")
	flag(f, &given, f.StringVar, &ov.OTLPEndpoint, "otlp-endpoint", "", "export traces and metrics over OTLP to this base URL (OTLP/HTTP http://HOST:4318, gRPC http://HOST:4317; default: the OTEL_EXPORTER_OTLP_* environment, if set)")
	flag(f, &given, f.StringVar, &ov.OTLPProtocol, "otlp-protocol", "", "OTLP transport: http/protobuf or grpc (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	flag(f, &given, f.StringVar, &ov.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at GET /metrics on this HOST:PORT, a listener of its own")
	flag(f, &given, f.BoolVar, &ov.Console, "console", true, "serve the web console at /console/ (agents, cards, chat, tasks; it calls the A2A endpoints with the user's credentials)")
	flag(f, &given, f.BoolVar, &ov.Metrics, "metrics", false, "serve Prometheus metrics at GET /metrics on --addr too (unauthenticated: prefer --metrics-addr on a private address)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to FILE at shutdown")
	f.StringVar(&memProfile, "memprofile", "", "write an allocation profile (pprof) to FILE at shutdown")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
	return cmd
}

// flag defines the flag name with bind (a FlagSet's XxxVar method) and,
// once the flags are parsed and given run, sets *dst to its value when it
// was given on the command line; otherwise *dst stays nil (the config
// file's value, or the gateway's default, stands).
func flag[T any](f *pflag.FlagSet, given *[]func(*pflag.FlagSet), bind func(*T, string, T, string), dst **T, name string, def T, usage string) {
	v := new(T)
	bind(v, name, def, usage)
	*given = append(*given, func(fs *pflag.FlagSet) {
		if fs.Changed(name) {
			*dst = v
		}
	})
}

// startProfiles starts a CPU profile into cpuFile (when set) and returns
// the function that stops it and writes the allocation profile into
// memFile (when set). It is how the hot paths of `serve` are profiled
// under a real load (see bench/README.md).
func startProfiles(cpuFile, memFile string) (func(), error) {
	var cpu *os.File
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		cpu = f
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memFile != "" {
			if f, err := os.Create(memFile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}
	}, nil
}
