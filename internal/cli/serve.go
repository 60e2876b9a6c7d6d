package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/pair"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

type builtin struct {
	name  string
	agent server.Agent
	card  a2a.AgentCard
}

func builtins() []builtin {
	return []builtin{
		{"echo", agents.Echo{}, agents.Echo{}.Card()},
		{"chat", agents.Chat{}, agents.Chat{}.Card()},
		{"slow", agents.Slow{}, agents.Slow{}.Card()},
	}
}

// defaultDataDir is where serve keeps its SQLite database by default:
// $A2ABRIDGE_DATA, else $XDG_DATA_HOME/a2abridge, else ~/.local/share/a2abridge.
func defaultDataDir() string {
	if d := os.Getenv("A2ABRIDGE_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "a2abridge")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "a2abridge")
	}
	return "a2abridge-data"
}

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		addr, dataDir, def, publicURL, logLevel, configPath string
		pgDSN                                               string
		mem, pushOn, replica                                bool
		lease                                               time.Duration
		maxBody                                             int64
		maxBatch                                            int
		keepAlive, retention, bodyTimeout, shutdownGrace    time.Duration
		cardMaxAge                                          time.Duration
		protocols                                           []string
		memoryCap                                           string
		tokens, pushAllow, trustedProxies, allowedHosts     []string
		cpuProfile, memProfile                              string
		otlpEndpoint, otlpProtocol, metricsAddr             string
		metricsMain                                         bool
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
POST / and GET /.well-known/agent-card.json. Tasks are kept in SQLite under
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
			file := &serveFile{}
			if configPath != "" {
				f, err := loadServeFile(configPath)
				if err != nil {
					return usageError{fmt.Errorf("--config: %w", err)}
				}
				file = f
			}
			fl := cmd.Flags()
			// The file fills what flags left unset.
			pick := func(flag string, v *string, fromFile string) {
				if !fl.Changed(flag) && fromFile != "" {
					*v = fromFile
				}
			}
			pick("addr", &addr, file.Addr)
			pick("public-url", &publicURL, file.PublicURL)
			pick("data", &dataDir, file.Data)
			pick("default", &def, file.Default)
			if !fl.Changed("memory") && file.Memory {
				mem = true
			}
			// The store: SQLite under --data (the default), --memory or
			// --postgres, one of them.
			pgFrom := "--postgres"
			if !fl.Changed("postgres") && file.Postgres != nil {
				pgDSN, pgFrom = file.Postgres.DSN, "--config: postgres.dsn"
				if pgDSN == "" {
					return usageError{fmt.Errorf("--config: postgres.dsn: empty: want the database's DSN (postgres://USER@HOST:PORT/DB)")}
				}
			}
			usePG := fl.Changed("postgres") || file.Postgres != nil
			if usePG {
				memFrom, dataFrom := "--memory", "--data"
				if !fl.Changed("memory") {
					memFrom = "--config: memory"
				}
				if !fl.Changed("data") {
					dataFrom = "--config: data"
				}
				switch {
				case mem:
					return usageError{fmt.Errorf("%s and %s are mutually exclusive: tasks are kept in PostgreSQL or in memory", pgFrom, memFrom)}
				case fl.Changed("data") || file.Data != "":
					return usageError{fmt.Errorf("%s and %s are mutually exclusive: tasks are kept in PostgreSQL or in SQLite under the data directory", pgFrom, dataFrom)}
				}
				if err := postgres.CheckDSN(pgDSN); err != nil {
					return usageError{fmt.Errorf("%s: %w", pgFrom, err)}
				}
			}
			// Replicas (issue 15): several serve on one PostgreSQL schema.
			replicaFrom, leaseFrom := "--replica", "--lease"
			if !fl.Changed("replica") && file.Postgres != nil && file.Postgres.Replica {
				replica, replicaFrom = true, "--config: postgres.replica"
			}
			if !fl.Changed("lease") && file.Postgres != nil && file.Postgres.Lease != nil {
				lease, leaseFrom = time.Duration(*file.Postgres.Lease), "--config: postgres.lease"
			}
			if (replica || fl.Changed("lease")) && !usePG {
				from := replicaFrom
				if !replica {
					from = leaseFrom
				}
				return usageError{fmt.Errorf("%s needs --postgres (or postgres.dsn in --config): replicas share a PostgreSQL database", from)}
			}
			if lease < time.Second || lease > time.Hour {
				return usageError{fmt.Errorf("%s %s: want a duration from 1s to 1h", leaseFrom, lease)}
			}
			runner := ""
			if replica {
				// The replica's id (its row in the replicas table, the
				// runner of its appends), chosen before anything runs so
				// that every log line of this replica names it.
				runner = a2a.NewID()
				log = log.With("replica", runner)
				log.Info("starting as a replica", "lease", lease)
			}
			if !fl.Changed("retain") && file.Retention != nil {
				retention = time.Duration(*file.Retention)
			}
			if retention < 0 {
				return usageError{fmt.Errorf("--retain %s: want a duration of 0 (keep forever) or more", retention)}
			}
			if !fl.Changed("shutdown-grace") && file.ShutdownGrace != nil {
				shutdownGrace = time.Duration(*file.ShutdownGrace)
			}
			if shutdownGrace < 0 {
				return usageError{fmt.Errorf("--shutdown-grace %s: want a duration of 0 (fail running tasks at once) or more", shutdownGrace)}
			}
			capBytes, err := parseByteSize(memoryCap)
			if err != nil {
				return usageError{fmt.Errorf("--memory-cap: %w", err)}
			}
			if !fl.Changed("memory-cap") && file.MemoryCap != nil {
				capBytes = int64(*file.MemoryCap)
			}
			if !fl.Changed("push") && file.Push.Enabled {
				pushOn = true
			}
			if !fl.Changed("push-allow") {
				pushAllow = append(pushAllow, file.Push.Allow...)
			}
			if len(pushAllow) > 0 {
				pushOn = true
			}
			if !fl.Changed("max-batch") && file.MaxBatch != nil {
				maxBatch = *file.MaxBatch
			}
			if maxBatch < 1 {
				return usageError{fmt.Errorf("--max-batch %d (max_batch): want 1 or more", maxBatch)}
			}
			if !fl.Changed("body-read-timeout") && file.BodyReadTimeout != nil {
				bodyTimeout = time.Duration(*file.BodyReadTimeout)
			}
			if bodyTimeout < 0 {
				return usageError{fmt.Errorf("--body-read-timeout %s (body_read_timeout): want a duration of 0 (no limit) or more", bodyTimeout)}
			}
			if !fl.Changed("card-max-age") && file.CardMaxAge != nil {
				cardMaxAge = time.Duration(*file.CardMaxAge)
			}
			if cardMaxAge < 0 {
				return usageError{fmt.Errorf("--card-max-age %s (card_max_age): want a duration of 0 (clients revalidate every time) or more", cardMaxAge)}
			}
			protocolsFrom := "--protocols"
			if !fl.Changed("protocols") && file.Protocols != nil {
				protocols, protocolsFrom = file.Protocols, "--config: protocols"
			}
			if len(protocols) == 0 {
				return usageError{fmt.Errorf("%s: empty: want 1.0, 0.3 or both", protocolsFrom)}
			}
			if err := (server.TransportOptions{ProtocolVersions: protocols}).Validate(); err != nil {
				return usageError{fmt.Errorf("%s: %w", protocolsFrom, err)}
			}
			proxies, err := parseTrustedProxies(trustedProxies, "--trusted-proxy")
			if err != nil {
				return usageError{err}
			}
			if !fl.Changed("trusted-proxy") {
				p, err := parseTrustedProxies(file.TrustedProxies, "--config: trusted_proxies")
				if err != nil {
					return usageError{err}
				}
				proxies = append(proxies, p...)
			}
			if err := checkAllowedHosts(allowedHosts, "--allowed-host"); err != nil {
				return usageError{err}
			}
			if !fl.Changed("allowed-host") {
				if err := checkAllowedHosts(file.AllowedHosts, "--config: allowed_hosts"); err != nil {
					return usageError{err}
				}
				allowedHosts = append(allowedHosts, file.AllowedHosts...)
			}

			tel := telemetryConfig{otlpEndpoint: otlpEndpoint, otlpFrom: "--otlp-endpoint", otlpProtocol: otlpProtocol, protocolFrom: "--otlp-protocol",
				metricsAddr: metricsAddr, metricsFrom: "--metrics-addr", metricsMain: metricsMain}
			if !fl.Changed("otlp-endpoint") && file.Telemetry.OTLPEndpoint != "" {
				tel.otlpEndpoint, tel.otlpFrom = file.Telemetry.OTLPEndpoint, "--config: telemetry.otlp_endpoint"
			}
			if !fl.Changed("otlp-protocol") && file.Telemetry.OTLPProtocol != "" {
				tel.otlpProtocol, tel.protocolFrom = file.Telemetry.OTLPProtocol, "--config: telemetry.otlp_protocol"
			}
			if !fl.Changed("metrics-addr") && file.Telemetry.MetricsAddr != "" {
				tel.metricsAddr, tel.metricsFrom = file.Telemetry.MetricsAddr, "--config: telemetry.metrics_addr"
			}
			if !fl.Changed("metrics") && file.Telemetry.Metrics {
				tel.metricsMain = true
			}
			if err := tel.check(); err != nil {
				return usageError{err}
			}

			builtinsOn := file.Builtins == nil || *file.Builtins
			if publicURL != "" {
				if !strings.HasPrefix(publicURL, "http://") && !strings.HasPrefix(publicURL, "https://") {
					return usageError{fmt.Errorf("--public-url must start with http:// or https://")}
				}
			}
			// Authentication: --auth-token (all agents) or the file's blocks.
			flagAuth := &authFile{}
			for _, kv := range tokens {
				sub, tok, ok := strings.Cut(kv, "=")
				if !ok || sub == "" || tok == "" {
					return usageError{fmt.Errorf("--auth-token %q: want SUBJECT=TOKEN", kv)}
				}
				if flagAuth.BearerTokens == nil {
					flagAuth.BearerTokens = map[string]string{}
				}
				flagAuth.BearerTokens[sub] = tok
			}
			// Every agent: the built-ins, then the configured ones in name
			// order, each built (its configuration validated) before the
			// store opens.
			authFor := func(name string, af *agentFile) (server.HandlerOptions, error) {
				block := file.Auth
				if af != nil && af.Auth != nil {
					block = af.Auth
				}
				if len(tokens) > 0 {
					block = flagAuth
				}
				set, err := block.build()
				if err != nil {
					return server.HandlerOptions{}, fmt.Errorf("auth for agent %s: %w", name, err)
				}
				o := server.HandlerOptions{Auth: set}
				if af != nil {
					o.CardRequiresAuth = af.CardRequiresAuth
					o.Attachments = af.attachmentOptions()
				}
				if o.CardRequiresAuth && len(set) == 0 {
					return o, fmt.Errorf("agent %s: card_requires_auth needs authentication", name)
				}
				if af != nil && af.ExtendedCard != nil && len(set) == 0 {
					return o, fmt.Errorf("agent %s: extended_card needs authentication", name)
				}
				return o, nil
			}
			var hosted []hostedAgent
			closeAgents := func() {
				for _, h := range hosted {
					if h.built.close != nil {
						_ = h.built.close()
					}
				}
			}
			names := slices.Sorted(maps.Keys(file.Agents))
			if builtinsOn {
				var own []string
				for _, b := range builtins() {
					own = append(own, b.name)
				}
				names = append(own, slices.DeleteFunc(names, func(n string) bool { return slices.Contains(own, n) })...)
			}
			for _, name := range names {
				af, configured := file.Agents[name]
				node := file.agentNodes[name]
				if !configured {
					af = agentFile{}
				}
				if err := checkAgentName(name); err != nil {
					closeAgents()
					return usageError{fmt.Errorf("--config: agents.%s: %w", name, err)}
				}
				built, err := buildAgent(cmd.Context(), log, name, &af, node)
				if err != nil {
					closeAgents()
					return usageError{fmt.Errorf("--config: %w", err)}
				}
				o, err := authFor(name, &af)
				if err != nil {
					closeAgents()
					if built.close != nil {
						_ = built.close()
					}
					return usageError{err}
				}
				o.ExtendedCard = af.extendedCard(built.card)
				o.Methods = built.methods
				o.NoPush = built.noPush
				kind := af.Kind
				if kind == "" {
					kind = name // a built-in under its own name
				}
				hosted = append(hosted, hostedAgent{name: name, kind: kind, built: built, opts: o, extend: af.extendedCard})
			}
			defer closeAgents()
			if len(hosted) == 0 {
				return usageError{fmt.Errorf("--config: no agents: builtins is false and agents is empty")}
			}
			if !fl.Changed("default") && file.Default == "" && !builtinsOn {
				def = hosted[0].name // echo is not hosted: the first configured agent
			}
			if !slices.ContainsFunc(hosted, func(h hostedAgent) bool { return h.name == def }) {
				have := make([]string, len(hosted))
				for i, h := range hosted {
					have[i] = h.name
				}
				flag := "--default"
				if !fl.Changed("default") && file.Default != "" {
					flag = "--config: default"
				}
				return usageError{fmt.Errorf("%s %q: no such agent (have %s)", flag, def, strings.Join(have, ", "))}
			}
			pairOpts, err := file.Pairs.options()
			if err != nil {
				closeAgents()
				return usageError{fmt.Errorf("--config: %w", err)}
			}
			var admin auth.Set
			if file.Admin != nil {
				if len(file.Admin.BearerTokens) == 0 {
					return usageError{fmt.Errorf("--config: admin.bearer_tokens: at least one token is required to turn the admin API on")}
				}
				b, err := auth.NewBearerTokens("admin", file.Admin.BearerTokens)
				if err != nil {
					return usageError{fmt.Errorf("--config: admin.bearer_tokens: %w", err)}
				}
				admin = auth.Set{b}
				for i, k := range file.Admin.Kinds {
					if kinds[k] == nil {
						return usageError{fmt.Errorf("--config: admin.kinds[%d]: unknown kind %q (have %s)", i, k, kindNames())}
					}
				}
				for i, v := range file.Admin.Env {
					if !envName.MatchString(v) {
						return usageError{fmt.Errorf("--config: admin.env[%d]: %q is not an environment variable name", i, v)}
					}
				}
			}

			cardSigning, err := cardSigningOptions(file.CardSigning)
			if err != nil {
				return usageError{fmt.Errorf("--config: %w", err)}
			}
			if cardSigning != nil && !slices.ContainsFunc(protocols, func(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "1.") }) {
				return usageError{fmt.Errorf("--config: card_signing with %s without 1.0: a signature covers a card's A2A 1.0 members only", protocolsFrom)}
			}
			// What lives in one process cannot be shared by replicas yet.
			if replica {
				pushFrom := "--push"
				if !fl.Changed("push") && !fl.Changed("push-allow") {
					pushFrom = "--config: push"
				}
				switch {
				case pushOn && publicURL == "":
					return usageError{fmt.Errorf("%s with %s needs --public-url (or public_url in --config): every replica must sign push notifications with the same issuer, the URL clients and webhooks reach the replicas at", pushFrom, replicaFrom)}
				case pushOn && file.Push.Keys != "":
					return usageError{fmt.Errorf("--config: push.keys with %s: each replica keeps its push signing keys in memory and publishes their public part in the database (a keys directory would be shared by every replica's config); remove push.keys", replicaFrom)}
				case pairOpts != nil:
					return usageError{fmt.Errorf("--config: pairs.enabled with %s: a pair's room lives in the process that created it; pairs are not available with replicas", replicaFrom)}
				case file.Admin != nil:
					return usageError{fmt.Errorf("--config: admin with %s: each replica loads the registered agents at its start only; the admin API is not available with replicas yet", replicaFrom)}
				}
			}

			var st store.Store
			if mem {
				o := memory.Options{MaxFinishedBytes: capBytes}
				if capBytes == 0 {
					o.MaxFinishedBytes = -1 // --memory-cap 0: no cap
				}
				st = memory.NewWithOptions(o)
				capText := "none"
				if capBytes > 0 {
					capText = humanize.IBytes(uint64(capBytes))
				}
				log.Info("using the in-memory store: tasks are lost when the process exits", "memory_cap", capText)
			} else if usePG {
				s, err := postgres.Open(cmd.Context(), pgDSN, postgres.Options{Exclusive: !replica, Shared: replica, Notify: replica})
				if errors.Is(err, postgres.ErrLocked) {
					if replica {
						return fmt.Errorf("%s: the database is in use by an a2abridge serve without --replica; stop it, or run every serve on this database with --replica", pgFrom)
					}
					return fmt.Errorf("%s: the database is in use by another a2abridge serve; stop it, use another database or search_path schema, or run every serve on it with --replica", pgFrom)
				}
				if err != nil {
					return fmt.Errorf("%s: open store: %w", pgFrom, err)
				}
				st = s
				log.Info("using the PostgreSQL store", "dsn", postgres.RedactDSN(pgDSN), "shared", replica, "lease", lease)
			} else {
				if err := os.MkdirAll(dataDir, 0o700); err != nil {
					return fmt.Errorf("create data directory: %w", err)
				}
				path := filepath.Join(dataDir, "a2abridge.db")
				s, err := sqlite.Open(path, sqlite.Options{})
				var le *sqlite.LockedError
				if errors.As(err, &le) {
					return dataInUse(dataDir, le.PID)
				}
				if err != nil {
					return fmt.Errorf("open store %s: %w", path, err)
				}
				st = s
				log.Info("using the SQLite store", "path", path)
			}
			defer st.Close()
			var adminKinds, adminEnv []string
			if file.Admin != nil {
				adminKinds, adminEnv = file.Admin.Kinds, file.Admin.Env
			}
			cfg := serveConfig{adminKinds: adminKinds, adminEnv: adminEnv, addr: addr, def: def, publicURL: publicURL, maxBody: maxBody, keepAlive: keepAlive, agents: hosted, retention: retention,
				admin: admin, authFor: authFor,
				shutdownGrace: shutdownGrace, maxBatch: maxBatch, bodyTimeout: bodyTimeout, trustedProxies: proxies, allowedHosts: allowedHosts,
				cardSigning: cardSigning, cardMaxAge: cardMaxAge, protocols: protocols, conversations: file.Conversations, pairs: pairOpts, lease: lease, replica: replica, runner: runner, telemetry: tel}
			if err := file.Conversations.check(); err != nil {
				return usageError{fmt.Errorf("--config: %w", err)}
			}
			if pushOn {
				keys := file.Push.Keys
				if keys == "" && !mem && !usePG {
					keys = filepath.Join(dataDir, "push-keys")
				}
				cfg.push = &pushConfig{keysDir: keys, allow: pushAllow, giveUpAfter: time.Duration(file.Push.GiveUpAfter),
					algorithm: file.Push.Algorithm, rotateEvery: time.Duration(file.Push.RotateEvery)}
			}
			if cpuProfile != "" || memProfile != "" {
				stop, err := startProfiles(cpuProfile, memProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return serve(cmd.Context(), log, st, cfg, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "YAML configuration file (auth, extended cards, push); flags override it")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free port)")
	f.StringVar(&dataDir, "data", defaultDataDir(), "directory of the SQLite database (and push signing keys)")
	f.BoolVar(&mem, "memory", false, "keep tasks in memory only (lost on exit)")
	f.StringVar(&pgDSN, "postgres", "", "keep tasks in the PostgreSQL database of this DSN (postgres://USER[:PASSWORD]@HOST:PORT/DB?sslmode=...; pool_max_conns etc.) instead of SQLite")
	f.BoolVar(&replica, "replica", false, "run as one of several serve replicas on the --postgres database (behind a load balancer): any request on any replica; every replica runs with --replica and the same agents")
	f.DurationVar(&lease, "lease", server.DefaultLeaseTime, "with --postgres: how long the tasks a replica was running outlive its last sign of life before another replica fails them")
	f.DurationVar(&retention, "retain", DefaultRetention, "keep finished tasks this long, then delete them with their events (0: forever)")
	f.DurationVar(&shutdownGrace, "shutdown-grace", DefaultShutdownGrace, "at SIGTERM or SIGINT, how long running tasks may finish before they are failed")
	f.StringVar(&memoryCap, "memory-cap", "256MiB", "with --memory: most bytes finished tasks may hold; the oldest go first (0: no cap)")
	f.StringVar(&def, "default", "echo", "agent that also answers at / (a built-in or a configured agent)")
	f.StringVar(&publicURL, "public-url", "", "base URL written into agent cards (default: an allowed Host, a trusted proxy's forwarded host, or the address the connection reached)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.Int64Var(&maxBody, "max-body", server.DefaultMaxBodyBytes, "request body limit in bytes")
	f.IntVar(&maxBatch, "max-batch", server.DefaultMaxBatch, "most requests in one JSON-RPC batch; a larger batch gets one -32600 error and none of it runs")
	f.DurationVar(&bodyTimeout, "body-read-timeout", server.DefaultBodyReadTimeout, "time a client has to send a request body; a slower one gets HTTP 408 (0: no limit)")
	f.StringArrayVar(&trustedProxies, "trusted-proxy", nil, "reverse proxy whose X-Forwarded-Host/-Proto and Forwarded headers are believed: CIDR or IP (repeatable)")
	f.StringArrayVar(&allowedHosts, "allowed-host", nil, "Host header that may be written into agent cards: HOST or HOST:PORT (repeatable; default: loopback names only)")
	f.DurationVar(&cardMaxAge, "card-max-age", server.DefaultCardMaxAge, "how long clients and caches may reuse an agent card without asking again (Cache-Control max-age; 0: revalidate every time)")
	f.StringSliceVar(&protocols, "protocols", []string{"1.0", "0.3"}, "A2A versions served: 1.0, 0.3 or both (comma-separated); requests of another get VersionNotSupportedError, and with 1.0 alone the card is a strict A2A 1.0 AgentCard")
	f.DurationVar(&keepAlive, "keep-alive", server.DefaultKeepAlive, "SSE keep-alive comment interval")
	f.StringArrayVar(&tokens, "auth-token", nil, "require bearer authentication on every agent: SUBJECT=TOKEN (repeatable)")
	f.BoolVar(&pushOn, "push", false, "enable push notifications (signed with keys kept under --data)")
	f.StringArrayVar(&pushAllow, "push-allow", nil, "webhook targets allowed although private or loopback: CIDR, IP[:PORT], HOST[:PORT] or *.DOMAIN (repeatable; implies --push)")
	f.StringVar(&otlpEndpoint, "otlp-endpoint", "", "export traces and metrics over OTLP to this base URL (OTLP/HTTP http://HOST:4318, gRPC http://HOST:4317; default: the OTEL_EXPORTER_OTLP_* environment, if set)")
	f.StringVar(&otlpProtocol, "otlp-protocol", "", "OTLP transport: http/protobuf or grpc (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	f.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at GET /metrics on this HOST:PORT, a listener of its own")
	f.BoolVar(&metricsMain, "metrics", false, "serve Prometheus metrics at GET /metrics on --addr too (unauthenticated: prefer --metrics-addr on a private address)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to FILE at shutdown")
	f.StringVar(&memProfile, "memprofile", "", "write an allocation profile (pprof) to FILE at shutdown")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
	return cmd
}

// cardMaxAge is HostOptions.CardMaxAge for --card-max-age d: 0 (or
// under a second) is no-cache, which HostOptions spells negative.
func cardMaxAge(d time.Duration) time.Duration {
	if d < time.Second {
		return -1
	}
	return d
}

// dataInUse is the error of a serve whose data directory dir is held by
// another process (pid; 0 if unknown): a second server would fail the
// first one's running tasks as left by a dead process.
func dataInUse(dir string, pid int) error {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	holder := "pid unknown"
	if pid > 0 {
		holder = fmt.Sprintf("pid %d", pid)
	}
	return fmt.Errorf("the data directory %s is in use by another a2abridge process (%s); stop it or use another --data directory", dir, holder)
}

// serveHeaderTimeout is how long `serve` waits for a request's headers.
const serveHeaderTimeout = 10 * time.Second

// newHTTPServer returns the http.Server of `serve` for h. Headers must
// arrive within headerTimeout; the body of each request within
// headerTimeout + bodyTimeout (ReadTimeout; bodyTimeout 0: no limit),
// which net/http clears once the body has been read to its end, so it
// bounds the reading of bodies that no handler reads (a GET with a body,
// which net/http drains after the handler) and never cuts an SSE stream
// or a long blocking call. The JSON-RPC transport bounds its own body
// reads with TransportOptions.BodyReadTimeout (HTTP 408). There is no
// WriteTimeout: SSE streams may stay open for hours (each SSE write has
// its own deadline).
func newHTTPServer(h http.Handler, log *slog.Logger, headerTimeout, bodyTimeout time.Duration) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if bodyTimeout > 0 {
		srv.ReadTimeout = headerTimeout + bodyTimeout
	}
	return srv
}

// isLoopbackListener reports a listener on a loopback address.
func isLoopbackListener(ln net.Listener) bool {
	ap, err := netip.ParseAddrPort(ln.Addr().String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// parseTrustedProxies parses --trusted-proxy / trusted_proxies values:
// CIDR prefixes, or single IP addresses (a /32 or /128). key names the
// option in errors.
func parseTrustedProxies(vals []string, key string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range vals {
		s := strings.TrimSpace(v)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%s %q: not a CIDR prefix or an IP address (e.g. 10.0.0.0/8, 192.168.1.10, fd00::/8)", key, v)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p) // server.NewHost normalises (unmaps, masks) it
	}
	return out, nil
}

// checkAllowedHosts validates --allowed-host / allowed_hosts values (see
// server.HostOptions.AllowedHosts); key names the option in errors.
func checkAllowedHosts(vals []string, key string) error {
	if err := (server.HostOptions{AllowedHosts: vals}).Validate(); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
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

// DefaultRetention is how long `serve` keeps finished tasks by default
// (--retain, retention:): 30 days.
const DefaultRetention = 720 * time.Hour

// DefaultShutdownGrace is how long `serve` lets running tasks finish after
// SIGTERM or SIGINT by default (--shutdown-grace, shutdown_grace:).
const DefaultShutdownGrace = 30 * time.Second

type serveConfig struct {
	// telemetry is what to export and where (--otlp-endpoint,
	// --metrics-addr, --metrics).
	telemetry                         telemetryConfig
	addr, def, publicURL              string
	maxBody                           int64
	maxBatch                          int
	keepAlive, retention, bodyTimeout time.Duration
	shutdownGrace                     time.Duration
	trustedProxies                    []netip.Prefix
	allowedHosts                      []string
	agents                            []hostedAgent
	admin                             auth.Set // nil: no admin API
	adminKinds                        []string // nil: defaultAdminKinds
	adminEnv                          []string
	// authFor resolves the authentication of an agent registered at
	// runtime as for one in the file.
	authFor     func(name string, af *agentFile) (server.HandlerOptions, error)
	push        *pushConfig
	cardSigning *server.CardSignerOptions // nil: cards are not signed
	// cardMaxAge is the cards' Cache-Control max-age (--card-max-age; 0:
	// no-cache).
	cardMaxAge time.Duration
	// protocols are the A2A versions served (--protocols; nil: both).
	protocols []string
	// conversations configures the conversation bridge's ad-hoc
	// scenarios (nil: off).
	conversations *conversationsFile
	pairs         *pair.Options // nil: no pairs API
	// lease is EngineOptions.LeaseTime (--lease).
	lease time.Duration
	// replica: one of several serve on the database (--replica).
	replica bool
	// runner: the replica's id (server.EngineOptions.Runner); "" when not
	// a replica (the engine picks one).
	runner string
}

type pushConfig struct {
	keysDir     string // "" keeps signing keys in memory
	allow       []string
	giveUpAfter time.Duration
	algorithm   string
	rotateEvery time.Duration
}

// checkWebhook is the server's PushOptions.CheckURL: a webhook URL is
// refused at set time when it is, or its host resolves (with r, nil for
// the system resolver) to, a loopback, private, link-local or metadata
// address that allow (--push-allow) does not list, or when its host does
// not resolve; the delivery client checks again at dial time. A refused
// address names the flag that allows it.
func checkWebhook(allow []string, r push.Resolver) func(context.Context, string) error {
	return func(ctx context.Context, u string) error {
		err := push.CheckURLContext(ctx, u, allow, r)
		if errors.Is(err, push.ErrForbiddenAddress) {
			return fmt.Errorf("%w; the server's operator can allow it with --push-allow", err)
		}
		return err
	}
}

// hostedAgent is an agent serve hosts: its name (/a2a/{name}), the built
// agent and card, and its handler options (authentication).
type hostedAgent struct {
	name  string
	kind  string
	built *builtAgent
	opts  server.HandlerOptions
	// extend makes the extended card from a public card that arrives
	// late (builtAgent.lateCard); nil: no extended card.
	extend func(a2a.AgentCard) *a2a.AgentCard
}

// checkAgentName accepts names that are one URL path segment of
// unreserved characters (RFC 3986 §2.3), 1 to 64 long.
func checkAgentName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("an agent name is 1 to 64 characters")
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') || name == "." || name == ".." {
			return fmt.Errorf("name %q: use letters, digits, '-', '_', '.' or '~' only", name)
		}
	}
	return nil
}

func serve(ctx context.Context, log *slog.Logger, st store.Store, cfg serveConfig, stdout io.Writer) error {
	// What serve starts in the background (watchCard) ends with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	if cfg.publicURL != "" {
		base = strings.TrimRight(cfg.publicURL, "/")
	}
	tel, err := startTelemetry(ctx, cfg.telemetry)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			log.Warn("telemetry: the last traces or metrics were not all exported", "err", err)
		}
	}()
	eo := server.EngineOptions{Logger: log, Retention: cfg.retention, LeaseTime: cfg.lease, TracerProvider: tel.tp, MeterProvider: tel.mp, Runner: cfg.runner}
	var jwks http.Handler
	var pushKeys func() []byte
	if p := cfg.push; p != nil {
		signer, err := push.NewSigner(push.SignerOptions{Dir: p.keysDir, Issuer: base, Algorithm: p.algorithm})
		if err != nil {
			return fmt.Errorf("push signing keys: %w", err)
		}
		jwks = signer.Handler()
		pushKeys = signer.JWKS
		var shared *sharedKeys
		if cfg.replica {
			pub, ok := st.(keyPublisher)
			if !ok {
				return fmt.Errorf("push with replicas: the store cannot publish signing keys")
			}
			shared = newSharedKeys(pub, signer.JWKS, log)
			if err := shared.publish(ctx); err != nil {
				return fmt.Errorf("push signing keys: publish them to the other replicas: %w", err)
			}
			go shared.run(ctx)
			jwks = shared.Handler()
			pushKeys = shared.JWKS
		}
		if p.rotateEvery > 0 {
			go func() {
				tk := time.NewTicker(p.rotateEvery)
				defer tk.Stop()
				for {
					select {
					case <-tk.C:
						if err := signer.Rotate(); err != nil {
							log.Error("push key rotation failed", "err", err)
							continue
						}
						log.Info("push signing key rotated", "kid", signer.KeyID())
						if shared != nil {
							if err := shared.publish(ctx); err != nil {
								log.Warn("publishing the rotated push signing key failed; run retries every minute", "err", err)
							}
						}
					case <-ctx.Done():
						return
					}
				}
			}()
		}
		allow := p.allow
		eo.Push = &server.PushOptions{
			Signer:      signer,
			Client:      push.NewGuardedClient(push.GuardOptions{Allow: allow}),
			CheckURL:    checkWebhook(allow, nil),
			GiveUpAfter: p.giveUpAfter,
		}
		log.Info("push notifications enabled", "jwks", base+"/.well-known/jwks.json", "kid", signer.KeyID(), "allow", allow)
	}
	var cardSigner *server.CardSigner
	if o := cfg.cardSigning; o != nil {
		o.ExtraKeys = pushKeys
		if cardSigner, err = server.NewCardSigner(*o); err != nil {
			return err
		}
		jwks = nil // the card signer's handler publishes the push keys too
		log.Info("agent cards are signed", "kid", cardSigner.KeyID(), "alg", o.Algorithm, "jwks", base+server.JWKSPath)
	}
	eng, err := server.NewEngine(ctx, st, eo)
	if err != nil {
		return err
	}
	bodyTimeout := cfg.bodyTimeout
	if bodyTimeout == 0 {
		bodyTimeout = -1 // --body-read-timeout 0: no limit
	}
	host := server.NewHost(server.HostOptions{
		PublicURL: cfg.publicURL, Default: cfg.def, JWKS: jwks,
		TrustedProxies: cfg.trustedProxies, AllowedHosts: cfg.allowedHosts,
		Transport: server.TransportOptions{Logger: log, MaxBodyBytes: cfg.maxBody, KeepAlive: cfg.keepAlive,
			MaxBatch: cfg.maxBatch, BodyReadTimeout: bodyTimeout, CardSigner: cardSigner, ProtocolVersions: cfg.protocols},
		CardMaxAge: cardMaxAge(cfg.cardMaxAge),
	})
	for _, a := range cfg.agents {
		o := conversationHandlerOptions(a, cfg.conversations, st)
		host.Add(server.NewHandler(eng, a.name, a.built.agent, a.built.card, o))
		watchCard(ctx, log, a.name, a.built, o, a.extend, eng, func(h *server.Handler, _ a2a.AgentCard, _ server.HandlerOptions) bool { host.Add(h); return true })
		if len(o.Auth) > 0 {
			log.Info("agent requires authentication", "agent", a.name, "schemes", len(o.Auth), "extended_card", o.ExtendedCard != nil)
		}
	}
	// Every agent also answers the simple HTTP dialect. A removed agent's
	// tombstone (retired) answers the calls of its finished tasks and
	// takes no new one: the endpoint answers those as for an unknown agent.
	host.Handle("/simple/{agent}", simple.NewEndpoint(host.Handler, simple.EndpointOptions{Logger: log}))
	// The probes of load balancers and Kubernetes (issue 16 §3).
	health := server.HealthHandler(eng)
	host.Handle("GET /healthz", health)
	host.Handle("GET /readyz", health)
	if tel.metrics != nil && cfg.telemetry.metricsMain {
		host.Handle("GET /metrics", tel.metrics)
	}
	if tel.metrics != nil && cfg.telemetry.metricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.telemetry.metricsAddr)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.telemetry.metricsFrom, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", tel.metrics)
		msrv := newHTTPServer(mux, log, serveHeaderTimeout, cfg.bodyTimeout)
		go func() { _ = msrv.Serve(mln) }()
		defer msrv.Close()
		log.Info("metrics served", "url", "http://"+mln.Addr().String()+"/metrics")
	}
	if traces, metrics := cfg.telemetry.otlpSignals(); traces || metrics {
		tp, _ := cfg.telemetry.protocol("TRACES")
		mp, _ := cfg.telemetry.protocol("METRICS")
		log.Info("telemetry exported over OTLP", "endpoint", orEnv(cfg.telemetry.otlpEndpoint), "traces", traces, "metrics", metrics,
			"traces_protocol", tp, "metrics_protocol", mp)
	}
	// The conversation bridge's /api/bridge routes (issue 14).
	bridge, err := mountConversations(log, eng, host, cfg, st)
	if err != nil {
		return err
	}
	mountAttachments(host, st, bridge.handler, log)
	reg, err := startAdmin(ctx, log, st, eng, host, cfg)
	if err != nil {
		return err
	}
	defer reg.close()
	closePairs, err := startPairs(log, st, eng, host, cfg)
	if err != nil {
		return err
	}
	defer closePairs()
	if cfg.publicURL == "" && len(cfg.allowedHosts) == 0 && !isLoopbackListener(ln) {
		log.Info("agent cards name the address each connection reached, or a loopback name on loopback; set --public-url or --allowed-host to name this server otherwise", "addr", ln.Addr().String())
	}
	srv := newHTTPServer(host, log, serveHeaderTimeout, cfg.bodyTimeout)
	keep := "forever"
	if cfg.retention > 0 {
		keep = cfg.retention.String()
	}
	log.Info("a2abridge serving", "addr", ln.Addr().String(), "a2a", strings.Join(servedVersions, ", "), "bindings", strings.Join(servedBindings, ", "), "default", cfg.def, "card", base+"/.well-known/agent-card.json", "retain_finished", keep)
	fmt.Fprintf(stdout, "a2abridge listening on http://%s (%s; default agent %q; agents: ", ln.Addr(), protocolsText(), cfg.def)
	for i, a := range cfg.agents {
		if i > 0 {
			fmt.Fprint(stdout, ", ")
		}
		fmt.Fprintf(stdout, "%s/a2a/%s", base, a.name)
	}
	fmt.Fprintln(stdout, ")")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Graceful shutdown: the listener closes and new messages are refused
	// at once; running tasks may finish for the grace period, then the rest
	// are failed with a reason (their streams get that final event, streams
	// of other tasks end); then the server's last answers are waited for.
	log.Info("shutting down", "grace", cfg.shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace+10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	gctx, cancelGrace := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancelGrace()
	closePairs() // their waiting executions end at once
	n, err := eng.Shutdown(gctx)
	if err != nil {
		log.Warn("tasks still running after the shutdown grace period were not all settled", "err", err)
	} else if n > 0 {
		log.Info("tasks failed at the end of the shutdown grace period", "tasks", n)
	}
	if err := <-shut; err != nil {
		_ = srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	log.Info("stopped")
	return nil
}
