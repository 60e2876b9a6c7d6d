package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/auth"
	"github.com/a2abridge/a2abridge/bridge/pair"
	"github.com/a2abridge/a2abridge/internal/agents"
	"github.com/a2abridge/a2abridge/internal/forwarded"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/postgres"
	"github.com/a2abridge/a2abridge/store/sqlite"
)

// Overrides are settings given besides a Config, as the flags of
// `a2abridge serve` are: each non-nil field replaces the Config's value
// (a nil slice leaves the Config's list). Errors name an override by its
// flag (--postgres).
type Overrides struct {
	// Addr is the listen address, HOST:PORT (port 0 picks a free port)
	// (--addr; Config.Addr).
	Addr *string
	// PublicURL is the base URL written into agent cards (--public-url).
	PublicURL *string
	// Data is the directory of the SQLite database (--data).
	Data *string
	// Memory keeps tasks in memory only (--memory).
	Memory *bool
	// MemoryCap is the most bytes finished tasks may hold in memory; 0:
	// no cap (--memory-cap).
	MemoryCap *int64
	// Postgres is the DSN of a PostgreSQL database to keep tasks in
	// (--postgres).
	Postgres *string
	// Replica runs as one of several replicas on the Postgres database
	// (--replica).
	Replica *bool
	// Lease is how long a dead replica's running tasks wait before
	// another fails them (--lease).
	Lease *time.Duration
	// Retention is how long finished tasks are kept; 0: forever
	// (--retain).
	Retention *time.Duration
	// ShutdownGrace is how long running tasks may finish at shutdown
	// (--shutdown-grace).
	ShutdownGrace *time.Duration
	// Default is the agent that also answers at / (--default).
	Default *string
	// MaxBody is the request body limit in bytes (--max-body; no config
	// key; unset: server.DefaultMaxBodyBytes).
	MaxBody *int64
	// MaxBatch is the most requests of one JSON-RPC batch (--max-batch).
	MaxBatch *int
	// BodyReadTimeout is the time a client has to send a body; 0: no
	// limit (--body-read-timeout).
	BodyReadTimeout *time.Duration
	// CardMaxAge is the cards' Cache-Control max-age; 0: revalidate
	// every time (--card-max-age).
	CardMaxAge *time.Duration
	// KeepAlive is the SSE keep-alive comment interval (--keep-alive; no
	// config key; unset: server.DefaultKeepAlive).
	KeepAlive *time.Duration
	// Protocols are the A2A versions served, "1.0" and/or "0.3"
	// (--protocols; non-nil and empty is an error).
	Protocols []string
	// TrustedProxies are reverse proxies (CIDR or IP) whose forwarding
	// headers are believed (--trusted-proxy).
	TrustedProxies []string
	// AllowedHosts are Host headers that may be written into cards
	// (--allowed-host).
	AllowedHosts []string
	// AuthTokens, SUBJECT=TOKEN each, require bearer authentication on
	// every agent instead of the config's auth blocks (--auth-token).
	AuthTokens []string
	// Push turns push notifications on (--push).
	Push *bool
	// GRPC serves the gRPC binding (--grpc; unset: the config's
	// grpc.enabled, else true).
	GRPC *bool
	// GRPCAddr is a listen address for gRPC alone (--grpc-addr).
	GRPCAddr *string
	// GRPCPublicAddr is the gRPC target written into cards
	// (--grpc-public-addr).
	GRPCPublicAddr *string
	// TLSCert and TLSKey are the PEM files of the certificate served on
	// addr (--tls-cert, --tls-key; tls.cert_file, tls.key_file).
	TLSCert, TLSKey *string
	// PushAllow are webhook targets allowed although private or
	// loopback; non-empty implies Push (--push-allow).
	PushAllow []string
	// OTLPEndpoint is the base URL of an OTLP receiver (--otlp-endpoint).
	OTLPEndpoint *string
	// OTLPProtocol is "http/protobuf" or "grpc" (--otlp-protocol).
	OTLPProtocol *string
	// MetricsAddr serves GET /metrics on a listener of its own
	// (--metrics-addr).
	MetricsAddr *string
	// Metrics serves GET /metrics on the main listener too (--metrics).
	Metrics *bool
	// Console serves the web console below /console/ (--console; unset:
	// the config's console.enabled, else true).
	Console *bool
}

// DefaultAddr is the listen address when neither the Config nor the
// Overrides give one.
const DefaultAddr = "127.0.0.1:8080"

// DefaultMemoryCap is the most bytes finished tasks hold in memory by
// default (memory_cap, --memory-cap): 256 MiB.
const DefaultMemoryCap = 256 << 20

// DefaultRetention is how long `serve` keeps finished tasks by default
// (--retain, retention:): 30 days.
const DefaultRetention = 720 * time.Hour

// DefaultShutdownGrace is how long `serve` lets running tasks finish after
// SIGTERM or SIGINT by default (--shutdown-grace, shutdown_grace:).
const DefaultShutdownGrace = 30 * time.Second

// DefaultDataDir is where the SQLite database is kept when neither the
// Config nor the Overrides name a directory: $A2ABRIDGE_DATA, else
// $XDG_DATA_HOME/a2abridge, else ~/.local/share/a2abridge.
func DefaultDataDir() string {
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

// ConfigError is an error in the configuration (the Config, the
// Overrides, or a file they name): the gateway did not start and will
// not until the configuration changes. Its text names the key
// (Options.ConfigName prefixes it) or the Overrides' flag. a2abridge
// serve exits 2 on it.
type ConfigError struct {
	// Err says what is wrong, naming the flag or key.
	Err error
}

// Error is Err's text.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(err error) error { return &ConfigError{Err: err} }

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

// resolve checks the configuration, file's and overrides', and builds
// every agent (before the store opens: a bad agent costs no store). On an
// error the agents built so far are closed.
func resolve(ctx context.Context, log *slog.Logger, file *Config, ov *Overrides, configName string) (cfg *serveConfig, err error) {
	// pre starts the errors about a Config key: "--config: " in serve.
	pre := ""
	if configName != "" {
		pre = configName + ": "
	}
	if file == nil {
		file = &Config{}
	}
	if ov == nil {
		ov = &Overrides{}
	}
	str := func(o *string, fromFile, def string) string {
		switch {
		case o != nil:
			return *o
		case fromFile != "":
			return fromFile
		}
		return def
	}
	dur := func(o *time.Duration, fromFile *Duration, def time.Duration) time.Duration {
		switch {
		case o != nil:
			return *o
		case fromFile != nil:
			return time.Duration(*fromFile)
		}
		return def
	}
	addr := str(ov.Addr, file.Addr, DefaultAddr)
	publicURL := str(ov.PublicURL, file.PublicURL, "")
	dataDir := str(ov.Data, file.Data, DefaultDataDir())
	def := str(ov.Default, file.Default, "echo")
	mem := file.Memory
	if ov.Memory != nil {
		mem = *ov.Memory
	}
	// The store: SQLite under data (the default), memory or postgres,
	// one of them.
	pgDSN, pgFrom := "", "--postgres"
	if ov.Postgres != nil {
		pgDSN = *ov.Postgres
	} else if file.Postgres != nil {
		pgDSN, pgFrom = file.Postgres.DSN, pre+"postgres.dsn"
		if pgDSN == "" {
			return nil, configErr(errors.New(pre + "postgres.dsn: empty: want the database's DSN (postgres://USER@HOST:PORT/DB)"))
		}
	}
	usePG := ov.Postgres != nil || file.Postgres != nil
	if usePG {
		memFrom, dataFrom := "--memory", "--data"
		if ov.Memory == nil {
			memFrom = pre + "memory"
		}
		if ov.Data == nil {
			dataFrom = pre + "data"
		}
		switch {
		case mem:
			return nil, configErr(fmt.Errorf("%s and %s are mutually exclusive: tasks are kept in PostgreSQL or in memory", pgFrom, memFrom))
		case ov.Data != nil || file.Data != "":
			return nil, configErr(fmt.Errorf("%s and %s are mutually exclusive: tasks are kept in PostgreSQL or in SQLite under the data directory", pgFrom, dataFrom))
		}
		if err := postgres.CheckDSN(pgDSN); err != nil {
			return nil, configErr(fmt.Errorf("%s: %w", pgFrom, err))
		}
	}
	// Replicas: several gateways on one PostgreSQL schema.
	replica, lease := false, server.DefaultLeaseTime
	replicaFrom, leaseFrom := "--replica", "--lease"
	if ov.Replica != nil {
		replica = *ov.Replica
	} else if file.Postgres != nil && file.Postgres.Replica {
		replica, replicaFrom = true, pre+"postgres.replica"
	}
	if ov.Lease != nil {
		lease = *ov.Lease
	} else if file.Postgres != nil && file.Postgres.Lease != nil {
		lease, leaseFrom = time.Duration(*file.Postgres.Lease), pre+"postgres.lease"
	}
	if (replica || ov.Lease != nil) && !usePG {
		from := replicaFrom
		if !replica {
			from = leaseFrom
		}
		return nil, configErr(fmt.Errorf("%s needs --postgres (or postgres.dsn in --config): replicas share a PostgreSQL database", from))
	}
	if lease < time.Second || lease > time.Hour {
		return nil, configErr(fmt.Errorf("%s %s: want a duration from 1s to 1h", leaseFrom, lease))
	}
	runner := ""
	if replica {
		// The replica's id (its row in the replicas table, the runner of
		// its appends), chosen before anything runs so that every log line
		// of this replica names it.
		runner = a2a.NewID()
		log = log.With("replica", runner)
		log.Info("starting as a replica", "lease", lease)
	}
	retention := dur(ov.Retention, file.Retention, DefaultRetention)
	if retention < 0 {
		return nil, configErr(fmt.Errorf("--retain %s: want a duration of 0 (keep forever) or more", retention))
	}
	shutdownGrace := dur(ov.ShutdownGrace, file.ShutdownGrace, DefaultShutdownGrace)
	if shutdownGrace < 0 {
		return nil, configErr(fmt.Errorf("--shutdown-grace %s: want a duration of 0 (fail running tasks at once) or more", shutdownGrace))
	}
	var capBytes int64 = DefaultMemoryCap
	if ov.MemoryCap != nil {
		capBytes = *ov.MemoryCap
	} else if file.MemoryCap != nil {
		capBytes = int64(*file.MemoryCap)
	}
	pushOn := file.Push.Enabled
	if ov.Push != nil {
		pushOn = *ov.Push
	}
	pushAllow := ov.PushAllow
	if pushAllow == nil {
		pushAllow = append(pushAllow, file.Push.Allow...)
	}
	if len(pushAllow) > 0 {
		pushOn = true
	}
	maxBatch := server.DefaultMaxBatch
	if ov.MaxBatch != nil {
		maxBatch = *ov.MaxBatch
	} else if file.MaxBatch != nil {
		maxBatch = *file.MaxBatch
	}
	if maxBatch < 1 {
		return nil, configErr(fmt.Errorf("--max-batch %d (max_batch): want 1 or more", maxBatch))
	}
	bodyTimeout := dur(ov.BodyReadTimeout, file.BodyReadTimeout, server.DefaultBodyReadTimeout)
	if bodyTimeout < 0 {
		return nil, configErr(fmt.Errorf("--body-read-timeout %s (body_read_timeout): want a duration of 0 (no limit) or more", bodyTimeout))
	}
	cardMaxAge := dur(ov.CardMaxAge, file.CardMaxAge, server.DefaultCardMaxAge)
	if cardMaxAge < 0 {
		return nil, configErr(fmt.Errorf("--card-max-age %s (card_max_age): want a duration of 0 (clients revalidate every time) or more", cardMaxAge))
	}
	protocols, protocolsFrom := []string{"1.0", "0.3"}, "--protocols"
	if ov.Protocols != nil {
		protocols = ov.Protocols
	} else if file.Protocols != nil {
		protocols, protocolsFrom = file.Protocols, pre+"protocols"
	}
	if len(protocols) == 0 {
		return nil, configErr(fmt.Errorf("%s: empty: want 1.0, 0.3 or both", protocolsFrom))
	}
	if err := (server.TransportOptions{ProtocolVersions: protocols}).Validate(); err != nil {
		return nil, configErr(fmt.Errorf("%s: %w", protocolsFrom, err))
	}
	proxies, err := parseTrustedProxies(ov.TrustedProxies, "--trusted-proxy")
	if err != nil {
		return nil, configErr(err)
	}
	if ov.TrustedProxies == nil {
		p, err := parseTrustedProxies(file.TrustedProxies, pre+"trusted_proxies")
		if err != nil {
			return nil, configErr(err)
		}
		proxies = append(proxies, p...)
	}
	allowedHosts := ov.AllowedHosts
	if err := checkAllowedHosts(allowedHosts, "--allowed-host"); err != nil {
		return nil, configErr(err)
	}
	if ov.AllowedHosts == nil {
		if err := checkAllowedHosts(file.AllowedHosts, pre+"allowed_hosts"); err != nil {
			return nil, configErr(err)
		}
		allowedHosts = append(allowedHosts, file.AllowedHosts...)
	}

	tel := telemetrySettings{otlpEndpoint: str(ov.OTLPEndpoint, "", ""), otlpFrom: "--otlp-endpoint", otlpProtocol: str(ov.OTLPProtocol, "", ""), protocolFrom: "--otlp-protocol",
		metricsAddr: str(ov.MetricsAddr, "", ""), metricsFrom: "--metrics-addr", metricsMain: ov.Metrics != nil && *ov.Metrics}
	if ov.OTLPEndpoint == nil && file.Telemetry.OTLPEndpoint != "" {
		tel.otlpEndpoint, tel.otlpFrom = file.Telemetry.OTLPEndpoint, pre+"telemetry.otlp_endpoint"
	}
	if ov.OTLPProtocol == nil && file.Telemetry.OTLPProtocol != "" {
		tel.otlpProtocol, tel.protocolFrom = file.Telemetry.OTLPProtocol, pre+"telemetry.otlp_protocol"
	}
	if ov.MetricsAddr == nil && file.Telemetry.MetricsAddr != "" {
		tel.metricsAddr, tel.metricsFrom = file.Telemetry.MetricsAddr, pre+"telemetry.metrics_addr"
	}
	if ov.Metrics == nil && file.Telemetry.Metrics {
		tel.metricsMain = true
	}
	if err := tel.check(); err != nil {
		return nil, configErr(err)
	}

	builtinsOn := file.Builtins == nil || *file.Builtins
	if publicURL != "" {
		if !strings.HasPrefix(publicURL, "http://") && !strings.HasPrefix(publicURL, "https://") {
			return nil, configErr(fmt.Errorf("--public-url must start with http:// or https://"))
		}
	}
	// Authentication: --auth-token (all agents) or the file's blocks.
	flagAuth := &AuthConfig{}
	for _, kv := range ov.AuthTokens {
		sub, tok, ok := strings.Cut(kv, "=")
		if !ok || sub == "" || tok == "" {
			return nil, configErr(fmt.Errorf("--auth-token %q: want SUBJECT=TOKEN", kv))
		}
		if flagAuth.BearerTokens == nil {
			flagAuth.BearerTokens = map[string]string{}
		}
		flagAuth.BearerTokens[sub] = tok
	}
	tokens := ov.AuthTokens
	// Rate limits: the top-level buckets are shared by every agent.
	globalLimit, err := file.Limits.buckets(pre + "limits")
	if err != nil {
		return nil, configErr(err)
	}
	clients := forwarded.New("", proxies, nil)
	// Every agent: the built-ins, then the configured ones in name
	// order, each built (its configuration validated) before the
	// store opens.
	authFor := func(name string, af *AgentConfig) (server.HandlerOptions, error) {
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
		var own *AgentLimitsConfig
		if af != nil {
			o.CardRequiresAuth = af.CardRequiresAuth
			o.Attachments = af.attachmentOptions()
			own = af.Limits
		}
		if o.Limiter, err = limiterFor(name, globalLimit, own, clients); err != nil {
			return o, err
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
			if h.built.Close != nil {
				_ = h.built.Close()
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
		if node != nil && configured && entryKeys(af) != file.loadedKeys[name] {
			node = nil // changed in code since LoadConfig
		}
		if !configured {
			af = AgentConfig{}
		} else if node == nil { // made in code
			n, err := agentNode(name, &af)
			if err != nil {
				closeAgents()
				return nil, configErr(fmt.Errorf("%s%w", pre, err))
			}
			node = n
		}
		if err := checkAgentName(name); err != nil {
			closeAgents()
			return nil, configErr(fmt.Errorf("%sagents.%s: %w", pre, name, err))
		}
		built, err := buildAgentWith(ctx, &Build{Name: name, node: node, file: &af, Logger: log, startup: true})
		if err != nil {
			closeAgents()
			return nil, configErr(fmt.Errorf("%s%w", pre, err))
		}
		o, err := authFor(name, &af)
		if err != nil {
			closeAgents()
			if built.Close != nil {
				_ = built.Close()
			}
			return nil, configErr(err)
		}
		o.ExtendedCard = af.extendedCard(built.Card)
		o.Methods = built.Methods
		o.NoPush = built.NoPush
		kind := af.Kind
		if kind == "" {
			kind = name // a built-in under its own name
		}
		hosted = append(hosted, hostedAgent{name: name, kind: kind, built: built, opts: o, extend: af.extendedCard})
	}
	defer func() {
		if err != nil {
			closeAgents()
		}
	}()
	settleCards(ctx, log, hosted)
	if len(hosted) == 0 {
		return nil, configErr(errors.New(pre + "no agents: builtins is false and agents is empty"))
	}
	if ov.Default == nil && file.Default == "" && !builtinsOn {
		def = hosted[0].name // echo is not hosted: the first configured agent
	}
	if !slices.ContainsFunc(hosted, func(h hostedAgent) bool { return h.name == def }) {
		have := make([]string, len(hosted))
		for i, h := range hosted {
			have[i] = h.name
		}
		flag := "--default"
		if ov.Default == nil && file.Default != "" {
			flag = pre + "default"
		}
		return nil, configErr(fmt.Errorf("%s %q: no such agent (have %s)", flag, def, strings.Join(have, ", ")))
	}
	pairOpts, err := file.Pairs.options()
	if err != nil {
		closeAgents()
		return nil, configErr(fmt.Errorf("%s%w", pre, err))
	}
	var admin auth.Set
	if file.Admin != nil {
		if len(file.Admin.BearerTokens) == 0 {
			return nil, configErr(errors.New(pre + "admin.bearer_tokens: at least one token is required to turn the admin API on"))
		}
		b, err := auth.NewBearerTokens("admin", file.Admin.BearerTokens)
		if err != nil {
			return nil, configErr(fmt.Errorf("%sadmin.bearer_tokens: %w", pre, err))
		}
		admin = auth.Set{b}
		for i, k := range file.Admin.Kinds {
			if kinds[k] == nil {
				return nil, configErr(fmt.Errorf("%sadmin.kinds[%d]: unknown kind %q (have %s)", pre, i, k, kindNames()))
			}
		}
		for i, v := range file.Admin.Env {
			if !envName.MatchString(v) {
				return nil, configErr(fmt.Errorf("%sadmin.env[%d]: %q is not an environment variable name", pre, i, v))
			}
		}
	}

	cardSigning, err := cardSigningOptions(file.CardSigning)
	if err != nil {
		return nil, configErr(fmt.Errorf("%s%w", pre, err))
	}
	if cardSigning != nil && !slices.ContainsFunc(protocols, func(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), "1.") }) {
		return nil, configErr(fmt.Errorf("%scard_signing with %s without 1.0: a signature covers a card's A2A 1.0 members only", pre, protocolsFrom))
	}
	// What lives in one process cannot be shared by replicas yet.
	if replica {
		pushFrom := "--push"
		if ov.Push == nil && ov.PushAllow == nil {
			pushFrom = pre + "push"
		}
		switch {
		case pushOn && publicURL == "":
			return nil, configErr(fmt.Errorf("%s with %s needs --public-url (or public_url in --config): every replica must sign push notifications with the same issuer, the URL clients and webhooks reach the replicas at", pushFrom, replicaFrom))
		case pushOn && file.Push.Keys != "":
			return nil, configErr(fmt.Errorf("%spush.keys with %s: each replica keeps its push signing keys in memory and publishes their public part in the database (a keys directory would be shared by every replica's config); remove push.keys", pre, replicaFrom))
		case pairOpts != nil:
			return nil, configErr(fmt.Errorf("%spairs.enabled with %s: a pair's room lives in the process that created it; pairs are not available with replicas", pre, replicaFrom))
		case file.Admin != nil:
			return nil, configErr(fmt.Errorf("%sadmin with %s: each replica loads the registered agents at its start only; the admin API is not available with replicas yet", pre, replicaFrom))
		}
	}

	var adminKinds, adminEnv []string
	if file.Admin != nil {
		adminKinds, adminEnv = file.Admin.Kinds, file.Admin.Env
	}
	maxBody, keepAlive := int64(server.DefaultMaxBodyBytes), server.DefaultKeepAlive
	if ov.MaxBody != nil {
		maxBody = *ov.MaxBody
	}
	if ov.KeepAlive != nil {
		keepAlive = *ov.KeepAlive
	}
	grpc, err := resolveGRPC(file.GRPC, ov, pre, addr, maxBody, protocols)
	if err != nil {
		return nil, configErr(err)
	}
	tlsCfg, err := loadTLS(file.TLS, ov, pre)
	if err != nil {
		return nil, configErr(err)
	}
	if tlsCfg != nil && grpc != nil {
		grpc.opts.TLSConfig = tlsCfg
	}
	console := file.Console.Enabled == nil || *file.Console.Enabled
	if ov.Console != nil {
		console = *ov.Console
	}
	cfg = &serveConfig{tls: tlsCfg, grpc: grpc, console: console, adminKinds: adminKinds, adminEnv: adminEnv, addr: addr, def: def, publicURL: publicURL, maxBody: maxBody, keepAlive: keepAlive, agents: hosted, retention: retention,
		admin: admin, authFor: authFor,
		shutdownGrace: shutdownGrace, maxBatch: maxBatch, bodyTimeout: bodyTimeout, trustedProxies: proxies, allowedHosts: allowedHosts,
		cardSigning: cardSigning, cardMaxAge: cardMaxAge, protocols: protocols, conversations: file.Conversations, pairs: pairOpts, lease: lease, replica: replica, runner: runner, telemetry: tel,
		log: log, mem: mem, memCap: capBytes, postgres: usePG, pgDSN: pgDSN, pgFrom: pgFrom, dataDir: dataDir}
	if pushOn {
		keys := file.Push.Keys
		if keys == "" && !mem && !usePG {
			keys = filepath.Join(dataDir, "push-keys")
		}
		cfg.push = &pushConfig{keysDir: keys, allow: pushAllow, giveUpAfter: time.Duration(file.Push.GiveUpAfter),
			algorithm: file.Push.Algorithm, rotateEvery: time.Duration(file.Push.RotateEvery)}
	}
	return cfg, nil
}

// openStore opens the store cfg names: memory, PostgreSQL, or SQLite
// under the data directory (the default).
func openStore(ctx context.Context, cfg *serveConfig) (store.Store, error) {
	log := cfg.log
	switch {
	case cfg.mem:
		o := memory.Options{MaxFinishedBytes: cfg.memCap}
		if cfg.memCap == 0 {
			o.MaxFinishedBytes = -1 // --memory-cap 0: no cap
		}
		capText := "none"
		if cfg.memCap > 0 {
			capText = humanize.IBytes(uint64(cfg.memCap))
		}
		log.Info("using the in-memory store: tasks are lost when the process exits", "memory_cap", capText)
		return memory.NewWithOptions(o), nil
	case cfg.postgres:
		s, err := postgres.Open(ctx, cfg.pgDSN, postgres.Options{Exclusive: !cfg.replica, Shared: cfg.replica, Notify: cfg.replica})
		if errors.Is(err, postgres.ErrLocked) {
			if cfg.replica {
				return nil, fmt.Errorf("%s: the database is in use by an a2abridge serve without --replica; stop it, or run every serve on this database with --replica", cfg.pgFrom)
			}
			return nil, fmt.Errorf("%s: the database is in use by another a2abridge serve; stop it, use another database or search_path schema, or run every serve on it with --replica", cfg.pgFrom)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: open store: %w", cfg.pgFrom, err)
		}
		log.Info("using the PostgreSQL store", "dsn", postgres.RedactDSN(cfg.pgDSN), "shared", cfg.replica, "lease", cfg.lease)
		return s, nil
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(cfg.dataDir, "a2abridge.db")
	s, err := sqlite.Open(path, sqlite.Options{})
	var le *sqlite.LockedError
	if errors.As(err, &le) {
		return nil, dataInUse(cfg.dataDir, le.PID)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	log.Info("using the SQLite store", "path", path)
	return s, nil
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

// serveConfig is the resolved configuration: the Config with the
// Overrides applied and checked, its agents built.
type serveConfig struct {
	log *slog.Logger
	// waits are the agents waiting for their remote's card (/readyz).
	waits *cardWaits
	// The store: memory (memCap bytes of finished tasks; 0: no cap),
	// PostgreSQL (pgDSN, named pgFrom in errors) or SQLite under dataDir.
	mem, postgres bool
	memCap        int64
	pgDSN, pgFrom string
	dataDir       string
	// telemetry is what to export and where (--otlp-endpoint,
	// --metrics-addr, --metrics).
	telemetry                         telemetrySettings
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
	authFor     func(name string, af *AgentConfig) (server.HandlerOptions, error)
	push        *pushConfig
	cardSigning *server.CardSignerOptions // nil: cards are not signed
	// cardMaxAge is the cards' Cache-Control max-age (--card-max-age; 0:
	// no-cache).
	cardMaxAge time.Duration
	// protocols are the A2A versions served (--protocols; nil: both).
	protocols []string
	// conversations configures the conversation bridge's ad-hoc
	// scenarios (nil: off).
	conversations *ConversationsConfig
	pairs         *pair.Options // nil: no pairs API
	// lease is EngineOptions.LeaseTime (--lease).
	lease time.Duration
	// replica: one of several serve on the database (--replica).
	replica bool
	// runner: the replica's id (server.EngineOptions.Runner); "" when not
	// a replica (the engine picks one).
	runner string
	// grpc is the gRPC binding's settings (nil: off).
	grpc *grpcSettings
	// console serves the web console below /console/.
	console bool
	// tls is the certificate served on addr (nil: cleartext).
	tls *tls.Config
}

type pushConfig struct {
	keysDir     string // "" keeps signing keys in memory
	allow       []string
	giveUpAfter time.Duration
	algorithm   string
	rotateEvery time.Duration
}

// WebhookChecker is the gateway's server.PushOptions.CheckURL: a webhook
// URL is refused at set time when it is, or its host resolves (with r,
// nil for the system resolver) to, a loopback, private, link-local or
// metadata address that allow (push.allow, --push-allow; see
// push.CheckURLContext for the forms) does not list, or when its host
// does not resolve; the delivery client checks again at dial time. A
// refused address's error wraps push.ErrForbiddenAddress and names the
// flag that allows it.
func WebhookChecker(allow []string, r push.Resolver) func(context.Context, string) error {
	return func(ctx context.Context, u string) error {
		err := push.CheckURLContext(ctx, u, allow, r)
		if errors.Is(err, push.ErrForbiddenAddress) {
			return fmt.Errorf("%w; the server's operator can allow it with --push-allow", err)
		}
		return err
	}
}

// startupCardWait is how long the gateway waits, when it starts, for the
// cards of remote agents that are being fetched (all at once): those that
// come in time are served from the start, the others under a stand-in
// until they come (watchCard), listed unavailable by /readyz meanwhile.
const startupCardWait = 2 * time.Second

// settleCards gives the agents whose card is being fetched at startup
// (Built.fetched) their card when the fetch ends within startupCardWait
// (together), and leaves the others to watchCard.
func settleCards(ctx context.Context, log *slog.Logger, hosted []hostedAgent) {
	deadline := time.NewTimer(startupCardWait)
	defer deadline.Stop()
	for i := range hosted {
		a := &hosted[i]
		b := a.built
		if b.fetched == nil {
			continue
		}
		select {
		case <-b.fetched:
		case <-deadline.C:
			deadline.Reset(0) // the time is up for the rest too
		}
		select {
		case <-b.fetched:
		default:
			log.Warn("the remote agent's card has not come yet; serving a generic card until it does", "agent", a.name, "waited", startupCardWait)
			continue
		}
		if b.fetchErr != nil {
			log.Warn("the remote agent's card could not be fetched; serving a generic card until it can be", "agent", a.name, "err", b.fetchErr)
			continue
		}
		card, err := b.LateCard(ctx) // the fetched card, at once
		if err != nil {
			log.Warn("the remote agent's card could not be used; serving a generic card until it can be", "agent", a.name, "err", err)
			continue
		}
		b.Card, b.LateCard = card, nil
		if a.extend != nil {
			a.opts.ExtendedCard = a.extend(card)
		}
	}
}

// hostedAgent is an agent serve hosts: its name (/a2a/{name}), the built
// agent and card, and its handler options (authentication).
type hostedAgent struct {
	name  string
	kind  string
	built *Built
	opts  server.HandlerOptions
	// extend makes the extended card from a public card that arrives
	// late (Built.LateCard); nil: no extended card.
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
