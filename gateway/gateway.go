package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/bridge/simple"
	"github.com/a2abridge/a2abridge/push"
	"github.com/a2abridge/a2abridge/server"
	"github.com/a2abridge/a2abridge/store"
)

// Options are what New needs besides the Config. The zero value is a
// gateway that logs nothing and takes every setting from the Config.
type Options struct {
	// Logger receives the gateway's log records (startup, agents, push,
	// shutdown); nil: discarded. Records logged in a request's context
	// name its trace when the handler is a server.NewLogHandler.
	Logger *slog.Logger
	// Overrides replace settings of the Config (the flags of a2abridge
	// serve); nil: none.
	Overrides *Overrides
	// ConfigName names the Config in errors about its keys: with
	// "--config" (what a2abridge serve sets), "--config: agents.x.url:
	// required"; "": the key alone, "agents.x.url: required". Errors
	// about settings that serve also takes as flags (retention, shutdown
	// grace, public URL, the store) name the flag ("--retain 1x: …"),
	// as serve's do.
	ConfigName string
	// Listener, when set, is where the gateway serves (Run), instead of
	// a listener New opens on the configured address; the gateway closes
	// it when it stops (and when New fails). nil: New listens on the
	// Config's addr.
	Listener net.Listener
}

// Gateway is a running gateway: its agents hosted on one engine and
// store, served by one http.Handler on its own listener. Make one with
// New; end it with Shutdown or Close.
type Gateway struct {
	cfg    *serveConfig
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	st     store.Store
	eng    *server.Engine
	host   *server.Host
	ln     net.Listener
	// httpLn is what the HTTP server accepts from: ln, or with gRPC on,
	// ln's connections that are not cleartext HTTP/2 (grpcMain's).
	httpLn, grpcMain net.Listener
	// grpc serves the gRPC binding (nil: off), on grpcMain and on grpcLn,
	// the listener of grpc.addr (nil: none).
	grpc   *server.GRPCServer
	grpcLn net.Listener
	// listener is Options.Listener (nil: New listens on cfg.addr).
	listener net.Listener
	srv      *http.Server
	base     string

	closers    []func() // run by finish in reverse order
	closePairs func()

	once sync.Once
	err  error         // Shutdown's or Close's result
	done chan struct{} // closed when Shutdown or Close has finished
}

// ProtocolVersions are the A2A protocol versions a gateway can serve
// ("1.0", "0.3.0"), in order of preference.
func ProtocolVersions() []string { return []string{a2a.Version10, a2a.ProtocolVersion} }

// Bindings are the A2A protocol bindings a gateway can serve ("JSONRPC",
// "HTTP+JSON", "GRPC"; A2A 1.0 §5); gRPC unless the config turns it off.
func Bindings() []string {
	return []string{a2a.TransportJSONRPC, a2a.TransportHTTPJSON, a2a.TransportGRPC}
}

// New checks cfg with opts.Overrides, builds every agent, opens the store,
// listens on the configured address and mounts every route: the agents
// at /a2a/{name} (the default one at / too), their cards, /simple/{agent},
// /healthz and /readyz, the conversation and pairing endpoints, the admin
// API and attachments. It does not serve yet: call Run, or serve Handler
// yourself. cfg may be nil (the defaults: the built-in agents on
// DefaultAddr, SQLite under DefaultDataDir).
//
// ctx bounds the start (a remote agent's card fetch, the store's opening)
// and the gateway's background work (card refreshes, key rotation): when
// it ends, that work stops; end the gateway itself with Shutdown.
//
// An error in the configuration is a *ConfigError naming the flag or key;
// others (the store cannot be opened, the address is taken) are returned
// as they are. On an error nothing stays open.
func New(ctx context.Context, cfg *Config, opts Options) (*Gateway, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc, err := resolve(ctx, log, cfg, opts.Overrides, opts.ConfigName)
	if err != nil {
		if opts.Listener != nil {
			opts.Listener.Close()
		}
		return nil, err
	}
	g := &Gateway{cfg: sc, log: sc.log, listener: opts.Listener, closePairs: func() {}, done: make(chan struct{})}
	if opts.Listener != nil {
		g.closers = append(g.closers, func() { opts.Listener.Close() })
	}
	g.closers = append(g.closers, func() {
		for _, h := range sc.agents {
			if h.built.Close != nil {
				_ = h.built.Close()
			}
		}
	})
	st, err := openStore(ctx, sc)
	if err != nil {
		g.finish()
		return nil, err
	}
	g.st = st
	g.closers = append(g.closers, func() { st.Close() })
	if err := sc.conversations.check(); err != nil {
		g.finish()
		if opts.ConfigName != "" {
			err = fmt.Errorf("%s: %w", opts.ConfigName, err)
		}
		return nil, configErr(err)
	}
	if err := g.start(ctx); err != nil {
		if g.eng != nil {
			ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = g.eng.Close(ectx)
			cancel()
		}
		g.finish()
		return nil, err
	}
	return g, nil
}

// finish releases what the gateway holds, the last acquired first.
func (g *Gateway) finish() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

// Handler is the gateway's http.Handler: every route New lists. It may be
// served by a server of your own instead of Run; then set the Config's
// public_url (or allowed_hosts) so that agent cards name that server.
// The gateway still holds its own listener (give Options.Listener, or
// the address "127.0.0.1:0", to keep the configured port free), and
// Shutdown awaits only the answers of its own server: shut your server
// down after Shutdown has let the running tasks finish.
func (g *Gateway) Handler() http.Handler { return g.srv.Handler }

// Addr is the address the gateway listens on (the port chosen when the
// configured one was 0): HTTP, and gRPC too unless it is off.
func (g *Gateway) Addr() net.Addr { return g.ln.Addr() }

// ServedBindings are the protocol bindings the gateway serves (Bindings,
// without GRPC when the config turns it off).
func (g *Gateway) ServedBindings() []string {
	if g.grpc == nil {
		return Bindings()[:2]
	}
	return Bindings()
}

// ServesTLS reports whether the gateway serves TLS (the Config's tls).
func (g *Gateway) ServesTLS() bool { return g.cfg.tls != nil }

// GRPCAddr is the address of the gRPC listener of grpc.addr
// (--grpc-addr); nil when there is none.
func (g *Gateway) GRPCAddr() net.Addr {
	if g.grpcLn == nil {
		return nil
	}
	return g.grpcLn.Addr()
}

// URL is the base URL written into agent cards: the Config's public_url,
// else http://ADDR of the listener.
func (g *Gateway) URL() string { return g.base }

// ConsoleURL is the URL of the web console (URL() + "/console/"), "" when
// it is off.
func (g *Gateway) ConsoleURL() string {
	if !g.cfg.console {
		return ""
	}
	return g.base + "/console/"
}

// DefaultAgent is the name of the agent that also answers at /.
func (g *Gateway) DefaultAgent() string { return g.cfg.def }

// Agents are the names of the agents hosted at start (built-ins first,
// then the configured ones by name), each served at URL()+"/a2a/"+name.
// Agents registered later through the admin API are not listed.
func (g *Gateway) Agents() []string {
	names := make([]string, len(g.cfg.agents))
	for i, a := range g.cfg.agents {
		names[i] = a.name
	}
	return names
}

// Run serves on the gateway's listener until ctx ends, then shuts down
// as Shutdown does (its result is Run's). When Shutdown or Close is
// called meanwhile, Run returns their result once they have finished; if
// serving fails otherwise, Run closes the gateway and returns that error.
func (g *Gateway) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() {
		if g.srv.TLSConfig != nil {
			errc <- g.srv.ServeTLS(g.httpLn, "", "")
			return
		}
		errc <- g.srv.Serve(g.httpLn)
	}()
	if g.grpc != nil {
		for _, ln := range []net.Listener{g.grpcMain, g.grpcLn} {
			if ln != nil {
				go func() {
					if err := g.grpc.Serve(ln); err != nil {
						g.log.Error("gRPC serving failed", "addr", ln.Addr().String(), "err", err)
					}
				}()
			}
		}
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			<-g.done
			return g.err
		}
		g.once.Do(func() {
			if g.grpc != nil {
				g.grpc.Stop() // its calls would reach a closed engine
			}
			ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = g.eng.Close(ectx)
			cancel()
			g.finish()
			close(g.done)
		})
		return err
	case <-ctx.Done():
	}
	return g.Shutdown(context.Background())
}

// Shutdown stops the gateway gracefully: the listener closes and new
// messages are refused at once; running tasks may finish for the
// configured shutdown grace (DefaultShutdownGrace unless set), then the
// rest fail with a reason (their streams get that final event); then the
// last answers are awaited (at most the grace plus 10 s, or until ctx
// ends) and the store, the agents and the telemetry are closed. Only the
// first call does this; later ones return its result.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.once.Do(func() {
		g.err = g.shutdown(ctx, g.cfg.shutdownGrace)
		close(g.done)
	})
	<-g.done
	return g.err
}

// Close stops the gateway at once: running tasks fail without a grace
// period and open connections are closed. Calling it after Shutdown
// does nothing.
func (g *Gateway) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.once.Do(func() {
		_ = g.srv.Close()
		if g.grpc != nil {
			g.grpc.Stop()
		}
		g.err = g.shutdown(ctx, 0)
		close(g.done)
	})
	<-g.done
	return g.err
}

func (g *Gateway) shutdown(ctx context.Context, grace time.Duration) error {
	log := g.log
	defer g.finish() // cancels the background work too
	// Graceful shutdown: the listener closes and new messages are refused
	// at once; running tasks may finish for the grace period, then the rest
	// are failed with a reason (their streams get that final event, streams
	// of other tasks end); then the server's last answers are waited for.
	log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(ctx, grace+10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- g.srv.Shutdown(sctx) }()
	grpcDone := make(chan struct{})
	go func() {
		defer close(grpcDone)
		if g.grpc != nil {
			// Its streams end with their tasks (the engine's shutdown below).
			g.grpc.GracefulStop(sctx)
		}
	}()
	defer func() { <-grpcDone }()
	gctx, cancelGrace := context.WithTimeout(ctx, grace)
	defer cancelGrace()
	g.closePairs() // their waiting executions end at once
	n, err := g.eng.Shutdown(gctx)
	if err != nil {
		log.Warn("tasks still running after the shutdown grace period were not all settled", "err", err)
	} else if n > 0 {
		log.Info("tasks failed at the end of the shutdown grace period", "tasks", n)
	}
	if err := <-shut; err != nil {
		_ = g.srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	log.Info("stopped")
	return nil
}

// start listens and mounts every route on the opened store.
func (g *Gateway) start(parent context.Context) error {
	cfg, log, st := *g.cfg, g.log, g.st
	// What the gateway starts in the background (watchCard, key rotation)
	// ends with it.
	ctx, cancel := context.WithCancel(parent)
	g.ctx, g.cancel = ctx, cancel
	g.closers = append(g.closers, cancel)
	ln := g.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.addr); err != nil {
			return err
		}
	}
	g.ln = ln
	g.closers = append(g.closers, func() { ln.Close() })
	base := "http://" + ln.Addr().String()
	if cfg.tls != nil {
		base = "https://" + ln.Addr().String()
	}
	if cfg.publicURL != "" {
		base = strings.TrimRight(cfg.publicURL, "/")
	}
	g.base = base
	tel, err := startTelemetry(ctx, cfg.telemetry)
	if err != nil {
		return err
	}
	g.closers = append(g.closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			log.Warn("telemetry: the last traces or metrics were not all exported", "err", err)
		}
	})
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
			CheckURL:    WebhookChecker(allow, nil),
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
	g.eng = eng
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
	if cfg.waits == nil {
		cfg.waits = newCardWaits()
	}
	for _, a := range cfg.agents {
		o := conversationHandlerOptions(a, cfg.conversations, st)
		host.Add(server.NewHandler(eng, a.name, a.built.Agent, a.built.Card, o))
		if a.built.LateCard != nil {
			cfg.waits.add(a.name)
		}
		name := a.name
		watchCard(ctx, log, a.name, a.built, o, a.extend, eng, func(h *server.AgentHandler, _ a2a.AgentCard, _ server.HandlerOptions) bool {
			host.Add(h)
			cfg.waits.done(name)
			return true
		})
		if len(o.Auth) > 0 {
			log.Info("agent requires authentication", "agent", a.name, "schemes", len(o.Auth), "extended_card", o.ExtendedCard != nil)
		}
	}
	// Every agent also answers the simple HTTP dialect. A removed agent's
	// tombstone (retired) answers the calls of its finished tasks and
	// takes no new one: the endpoint answers those as for an unknown agent.
	host.Handle("/simple/{agent}", simple.NewEndpoint(host.Handler, simple.EndpointOptions{Logger: log}))
	// The probes of load balancers and Kubernetes.
	health := server.HealthHandler(eng)
	host.Handle("GET /healthz", health)
	host.Handle("GET /readyz", readiness(health, cfg.waits))
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
		g.closers = append(g.closers, func() { msrv.Close() })
		log.Info("metrics served", "url", "http://"+mln.Addr().String()+"/metrics")
	}
	if traces, metrics := cfg.telemetry.otlpSignals(); traces || metrics {
		tp, _ := cfg.telemetry.protocol("TRACES")
		mp, _ := cfg.telemetry.protocol("METRICS")
		log.Info("telemetry exported over OTLP", "endpoint", orEnv(cfg.telemetry.otlpEndpoint), "traces", traces, "metrics", metrics,
			"traces_protocol", tp, "metrics_protocol", mp)
	}
	if cfg.console {
		var allow []string
		if cfg.push != nil {
			allow = cfg.push.allow
		}
		protect, _, err := apiProtection(cfg, "console", "this console call (another server's card, a check)")
		if err != nil {
			return err
		}
		var ownCert []byte
		if cfg.tls != nil && len(cfg.tls.Certificates) > 0 && len(cfg.tls.Certificates[0].Certificate) > 0 {
			ownCert = cfg.tls.Certificates[0].Certificate[0]
		}
		mountConsole(host, cfg.def, allow, protect, ln.Addr(), cfg.tls != nil, ownCert)
	}
	// The conversation bridge's /api/bridge routes.
	bridge, err := mountConversations(log, eng, host, cfg, st)
	if err != nil {
		return err
	}
	mountAttachments(host, st, bridge.handler, log)
	reg, err := startAdmin(ctx, log, st, eng, host, cfg)
	if err != nil {
		return err
	}
	g.closers = append(g.closers, reg.close)
	closePairs, err := startPairs(log, st, eng, host, cfg)
	if err != nil {
		return err
	}
	g.closers = append(g.closers, closePairs)
	g.closePairs = closePairs
	if cfg.publicURL == "" && len(cfg.allowedHosts) == 0 && !isLoopbackListener(ln) {
		log.Info("agent cards name the address each connection reached, or a loopback name on loopback; set --public-url or --allowed-host to name this server otherwise", "addr", ln.Addr().String())
	}
	g.srv = newHTTPServer(host, log, serveHeaderTimeout, cfg.bodyTimeout)
	g.host = host
	g.httpLn = ln
	grpcAt := ""
	if gs := cfg.grpc; gs != nil {
		opts := gs.opts
		if gs.addr != "" {
			gln, err := net.Listen("tcp", gs.addr)
			if err != nil {
				return fmt.Errorf("gRPC listener: %w", err)
			}
			g.grpcLn = gln
			g.closers = append(g.closers, func() { gln.Close() })
			if opts.PublicAddr == "" {
				opts.Port = gln.Addr().(*net.TCPAddr).Port
			}
			grpcAt = gln.Addr().String()
		}
		g.grpc = host.EnableGRPC(opts)
		if cfg.tls == nil {
			g.grpcMain, g.httpLn = server.SplitListener(ln, serveHeaderTimeout)
		} // under TLS, gRPC requests reach the HTTP/2 server: Host.ServeHTTP passes them on
	}
	if cfg.tls != nil {
		g.srv.TLSConfig = cfg.tls
	}
	keep := "forever"
	if cfg.retention > 0 {
		keep = cfg.retention.String()
	}
	bindings := Bindings()
	if cfg.grpc == nil {
		bindings = bindings[:2]
	}
	log.Info("a2abridge serving", "addr", ln.Addr().String(), "grpc_addr", grpcAt, "a2a", strings.Join(ProtocolVersions(), ", "), "bindings", strings.Join(bindings, ", "), "default", cfg.def, "card", base+"/.well-known/agent-card.json", "retain_finished", keep)
	return nil
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
