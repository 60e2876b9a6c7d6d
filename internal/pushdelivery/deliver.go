// Package pushdelivery delivers push notifications (A2A 1.0 §4.3.3, A2A
// 0.3.0 §9.5) from a durable outbox: each push notification config has a
// cursor in its task's event log in the store, and a worker per config
// posts the task's snapshot for every state change and finished artifact
// past the cursor, in order, at least once, retried with backoff, across
// restarts, and across replicas that claim configs (store.PushClaimer).
// The engine tells it when a task's log grew (Appended) and when configs
// changed (Configured, Forget).
package pushdelivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	taskfold "github.com/a2abridge/a2abridge/internal/fold"
	"github.com/a2abridge/a2abridge/push"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
	"github.com/a2abridge/a2abridge/store"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Signer signs the body of a notification for a webhook: the token is
// sent as "Authorization: Bearer <token>" (push.Signer implements it).
type Signer interface {
	Sign(audience, taskID string, body []byte) (string, error)
}

// Options configure delivery (server.PushOptions documents each).
type Options struct {
	Signer      Signer       // nil: no JWT
	Client      *http.Client // nil: http.DefaultClient
	GiveUpAfter time.Duration
	RetryBase   time.Duration
	RetryMax    time.Duration
}

// Env is what delivery uses of the engine: its context (which ends at
// its Close), logger, runner name (store.Append.Runner), store, whether
// it shares the store with other processes (then configs are claimed),
// and telemetry (nil: none).
type Env struct {
	Base   context.Context
	Log    *slog.Logger
	Runner string
	Store  store.Store
	Shared bool
	Tel    *telemetry.Provider
}

// Deliverer delivers the notifications of one engine's tasks.
type Deliverer struct {
	e       Env
	o       Options
	sem     chan struct{} // bounds concurrent deliveries
	mu      sync.Mutex
	workers map[string]chan struct{} // task id + "\x00" + config id → wake channel of its worker
	known   map[string]bool          // task id → has push configs (memo of the store)
	gen     uint64                   // advanced by forget: a memo read before it is not stored
	closed  bool                     // no worker starts once set (under mu)
	claims  store.PushClaimer        // the store's claims (several processes), or nil
	wg      sync.WaitGroup           // the workers; Engine.Close waits for them

	// traces holds, with tracing on, the span context of the request
	// that started each task's latest execution (in this process, or as
	// the store keeps it: store.TaskInfo.Trace; an invalid one when it
	// keeps none), so that the task's push delivery attempts join that
	// trace; the last pushTraces tasks, oldest dropped first (traceRing
	// holds the task of each slot; an entry knows its slot). traceGen
	// advances with each change, so that a trace read from the store
	// meanwhile is not remembered over a newer one.
	traceMu   sync.Mutex
	traces    map[string]traceEntry
	traceRing [pushTraces]string
	traceNext int
	traceGen  uint64
}

// traceEntry is a remembered trace and its slot in Deliverer.traceRing.
type traceEntry struct {
	sc   trace.SpanContext
	slot int
}

// pushTraces bounds Deliverer.traces.
const pushTraces = 4096

// Remember keeps sc as the trace of task taskID's push notifications.
func (p *Deliverer) Remember(taskID string, sc trace.SpanContext) {
	p.traceMu.Lock()
	defer p.traceMu.Unlock()
	p.rememberLocked(taskID, sc)
}

func (p *Deliverer) rememberLocked(taskID string, sc trace.SpanContext) {
	p.traceGen++
	if p.traces == nil {
		p.traces = map[string]traceEntry{}
	}
	if e, ok := p.traces[taskID]; ok {
		p.traces[taskID] = traceEntry{sc: sc, slot: e.slot}
		return
	}
	slot := p.traceNext
	if old := p.traceRing[slot]; old != "" {
		delete(p.traces, old)
	}
	p.traceRing[slot] = taskID
	p.traceNext = (slot + 1) % pushTraces
	p.traces[taskID] = traceEntry{sc: sc, slot: slot}
}

// traceOf is the trace of task taskID's push notifications: the one
// remembered, else the task's trace context as the store keeps it (the
// execution ran in another process, or before a restart), then
// remembered unless the trace changed meanwhile; invalid when there is
// none.
func (p *Deliverer) traceOf(ctx context.Context, taskID string) trace.SpanContext {
	p.traceMu.Lock()
	e, ok := p.traces[taskID]
	gen := p.traceGen
	p.traceMu.Unlock()
	if ok {
		return e.sc
	}
	info, err := p.e.Store.Task(ctx, taskID)
	if err != nil {
		return trace.SpanContext{} // not remembered: read again next time
	}
	sc, _ := telemetry.ParseTraceparent(info.Trace)
	p.traceMu.Lock()
	if p.traceGen == gen {
		p.rememberLocked(taskID, sc)
	}
	p.traceMu.Unlock()
	return sc
}

// ForgetTrace forgets the trace remembered for task taskID, or for every
// task (all): another process appended to it.
func (p *Deliverer) ForgetTrace(taskID string, all bool) {
	p.traceMu.Lock()
	defer p.traceMu.Unlock()
	p.traceGen++
	if all {
		clear(p.traces)
		p.traceRing = [pushTraces]string{}
		p.traceNext = 0
		return
	}
	if e, ok := p.traces[taskID]; ok {
		delete(p.traces, taskID)
		p.traceRing[e.slot] = ""
	}
}

// ObserveBacklog reports the configs with a delivery worker (pending or
// retrying deliveries) as a2abridge.push.backlog, until the returned
// function is called.
func (p *Deliverer) ObserveBacklog() (stop func()) {
	return p.e.Tel.ObservePushBacklog(func() int64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return int64(len(p.workers))
	})
}

// Close keeps new workers from starting; the engine then cancels the
// running ones (Env.Base) and waits for them (Wait).
func (p *Deliverer) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// Limits of push delivery.
const (
	// maxConcurrentPushes bounds deliveries in flight, over all tasks.
	maxConcurrentPushes = 32
	// maxPushBody is the largest notification body; a larger Task is sent
	// without its history, and skipped if still too large.
	maxPushBody = 4 << 20
)

// New returns the Deliverer of e; Start resumes pending deliveries.
func New(e Env, o Options) *Deliverer {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.GiveUpAfter <= 0 {
		o.GiveUpAfter = 24 * time.Hour
	}
	if o.RetryBase <= 0 {
		o.RetryBase = time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 5 * time.Minute
	}
	p := &Deliverer{e: e, o: o, sem: make(chan struct{}, maxConcurrentPushes),
		workers: map[string]chan struct{}{}, known: map[string]bool{}}
	if e.Shared {
		p.claims, _ = e.Store.(store.PushClaimer)
	}
	return p
}

// Appended is called after records were appended to a task: when the task
// has push configs, their workers are woken. Whether a task has configs is
// looked up once and remembered until the task is terminal.
func (p *Deliverer) Appended(taskID string, terminal bool) {
	p.mu.Lock()
	has, ok := p.known[taskID]
	gen := p.gen
	p.mu.Unlock()
	if !ok {
		cfgs, err := p.e.Store.PushConfigs(p.e.Base, taskID)
		if err != nil {
			return
		}
		has = len(cfgs) > 0
	}
	p.mu.Lock()
	switch {
	case terminal:
		delete(p.known, taskID)
	case p.gen == gen:
		p.known[taskID] = has
	default:
		// A config was set meanwhile (forget): what was read may be
		// stale, so nothing is remembered.
	}
	p.mu.Unlock()
	if has {
		p.kick(taskID)
	}
}

// Configured forgets what was remembered about a task's configs.
func (p *Deliverer) Configured(taskID string) { p.Forget(taskID, false) }

// Forget forgets what was remembered about a task's configs, or about
// every task's (all).
func (p *Deliverer) Forget(taskID string, all bool) {
	p.mu.Lock()
	p.gen++
	if all {
		clear(p.known)
	} else {
		delete(p.known, taskID)
	}
	p.mu.Unlock()
}

// Start delivers what previous runs left pending.
func (p *Deliverer) Start(ctx context.Context) error {
	pend, err := p.e.Store.PendingPush(ctx)
	if err != nil {
		return err
	}
	for _, c := range pend {
		p.KickConfig(c.TaskID, c.Config.ID)
	}
	return nil
}

// kick wakes (or starts) the worker of each config of the task.
func (p *Deliverer) kick(taskID string) {
	cfgs, err := p.e.Store.PushConfigs(p.e.Base, taskID)
	if err != nil {
		return
	}
	for _, c := range cfgs {
		p.KickConfig(taskID, c.Config.ID)
	}
}

// KickConfig wakes (or starts) the worker of one config: each config is
// delivered independently, so a dead webhook never delays another.
func (p *Deliverer) KickConfig(taskID, configID string) {
	key := taskID + "\x00" + configID
	p.mu.Lock()
	defer p.mu.Unlock()
	if wake, ok := p.workers[key]; ok {
		select {
		case wake <- struct{}{}:
		default:
		}
		return
	}
	if p.closed {
		return
	}
	wake := make(chan struct{}, 1)
	p.workers[key] = wake
	p.wg.Add(1)
	go p.work(key, taskID, configID, wake)
}

// pushLinger is how long a push worker waits for its task's next events
// after it delivered everything, keeping what it folded: while a task
// streams, its worker folds each event once instead of the whole log.
const pushLinger = time.Second

// pushState is a push worker's fold of its task's log: task is the fold of
// records 1..seq.
type pushState struct {
	task a2a.Task
	seq  int64
}

// work delivers until nothing is pending and no wake-up came for
// pushLinger (or the engine stops). With a store.PushClaimer it first
// claims the config (another live process delivering it: the worker
// ends, that process delivers) and releases the claim before it ends,
// claiming again when the release finds a delivery owed (one whose claim
// this worker refused meanwhile).
func (p *Deliverer) work(key, taskID, configID string, wake chan struct{}) {
	defer p.wg.Done()
	var st pushState
	linger := time.NewTimer(pushLinger)
	defer linger.Stop()
	claimed := false
	stuck := time.Duration(0) // the wait before claiming again when a round delivered nothing owed
	for {
		if p.claims != nil && !claimed {
			if !p.claim(taskID, configID) {
				// Another live process delivers the config (its release
				// looks again at what is owed), or the store failed (the
				// sweep tries again). A wake-up that came meanwhile may
				// be for an append made after that process released it:
				// the claim is tried again.
				if p.woken(key, wake) {
					continue
				}
				return
			}
			claimed = true
		}
		before := st.seq
		p.deliver(p.e.Base, taskID, configID, &st)
		linger.Reset(pushLinger)
		select {
		case <-wake:
			continue
		case <-linger.C:
		case <-p.e.Base.Done():
		}
		if claimed && p.e.Base.Err() == nil {
			// When the engine stops, the claim is left to end with
			// its lease (Engine.Close releases the lease).
			claimed = false
			if p.release(taskID, configID) {
				// Owed still: appended meanwhile (claimed again at
				// once), or not deliverable now (a store error: claimed
				// again after a growing wait, not in a busy loop).
				if st.seq > before {
					stuck = 0
					continue
				}
				stuck = min(max(2*stuck, pushLinger), 30*time.Second)
				t := time.NewTimer(stuck)
				select {
				case <-t.C:
					continue
				case <-wake:
					t.Stop()
					continue
				case <-p.e.Base.Done():
					t.Stop()
				}
			}
		}
		if p.woken(key, wake) {
			continue
		}
		return
	}
}

// woken reports whether a wake-up is pending for the worker of key; if
// not, the worker is removed (under mu, so a later kick starts a new one)
// and must return.
func (p *Deliverer) woken(key string, wake chan struct{}) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-wake:
		return true
	default:
	}
	delete(p.workers, key)
	return false
}

// claim claims the config for this engine (store.PushClaimer); false when
// another live process holds it, the config is gone, or the store failed
// (logged; the sweep of holdLease tries again).
func (p *Deliverer) claim(taskID, configID string) bool {
	ctx, cancel := context.WithTimeout(p.e.Base, pushClaimTimeout)
	defer cancel()
	ok, err := p.claims.ClaimPush(ctx, p.e.Runner, taskID, configID)
	if err != nil && p.e.Base.Err() == nil {
		p.e.Log.Warn("push: claim a config's deliveries", "task", taskID, "config", configID, "err", err)
	}
	return err == nil && ok
}

// release releases the config's claim; it reports whether a delivery is
// owed meanwhile (and claiming again is due).
func (p *Deliverer) release(taskID, configID string) bool {
	ctx, cancel := context.WithTimeout(p.e.Base, pushClaimTimeout)
	defer cancel()
	pending, err := p.claims.ReleasePush(ctx, p.e.Runner, taskID, configID)
	if err != nil && p.e.Base.Err() == nil {
		p.e.Log.Warn("push: release a config's deliveries", "task", taskID, "config", configID, "err", err)
	}
	return err == nil && pending
}

// pushClaimTimeout bounds one claim or release of a config.
const pushClaimTimeout = 10 * time.Second

// Sweep starts the deliveries that no other live process claims (those
// of a process that died, those a refused claim left owed, and this
// engine's own claims that a failed release left behind), with a
// store.PushClaimer: holdLease calls it at each renewal. A config whose
// worker runs here is only woken.
func (p *Deliverer) Sweep(ctx context.Context) {
	if p.claims == nil {
		return
	}
	pend, err := p.claims.UnclaimedPush(ctx, p.e.Runner, 0)
	if err != nil {
		if p.e.Base.Err() == nil {
			p.e.Log.Warn("push: find unclaimed deliveries", "err", err)
		}
		return
	}
	for _, c := range pend {
		p.KickConfig(c.TaskID, c.Config.ID)
	}
}

// current returns the config as stored now: found false once deleted;
// err when the store could not tell.
func (p *Deliverer) current(ctx context.Context, taskID, configID string) (c store.PushConfig, found bool, err error) {
	cfgs, err := p.e.Store.PushConfigs(ctx, taskID)
	if err != nil {
		return store.PushConfig{}, false, err
	}
	for _, c := range cfgs {
		if c.Config.ID == configID {
			return c, true, nil
		}
	}
	return store.PushConfig{}, false, nil
}

// pushPage is how many records deliver reads at a time.
const pushPage = 256

// deliver posts the task snapshot for the config's pending events, in
// order, advancing its durable cursor. Every status change gets its own
// notification; an artifact gets one when its last chunk arrives, or when
// a record other than an artifact update follows it (a run of artifact
// updates is covered by one notification after it, the snapshot then
// holding all of them; chunks still streaming are covered by the next).
// st carries the worker's fold of the log across calls, so each record is
// read and folded once.
func (p *Deliverer) deliver(ctx context.Context, taskID, configID string, st *pushState) {
	c, ok, err := p.current(ctx, taskID, configID)
	if err != nil {
		if ctx.Err() == nil {
			p.e.Log.Warn("push: read the config", "task", taskID, "config", configID, "err", err)
		}
		return
	}
	if !ok {
		return
	}
	for {
		// One record more than the page: the next one decides whether an
		// artifact update ends a run.
		recs, err := p.e.Store.Events(ctx, taskID, st.seq, pushPage+1)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				p.e.Log.Error("push: read task log", "task", taskID, "err", err)
			}
			return
		}
		page := recs[:min(len(recs), pushPage)]
		covered := c.Delivered
		for i, r := range page {
			if st.task, err = taskfold.Apply(st.task, r.Event); err != nil {
				p.e.Log.Error("push: fold task log", "task", taskID, "seq", r.Seq, "err", err)
				return
			}
			st.seq = r.Seq
			if r.Seq <= c.Delivered {
				continue
			}
			notify := false
			switch ev := r.Event.(type) {
			case *a2a.Task, *a2a.TaskStatusUpdateEvent:
				notify = true
			case *a2a.TaskArtifactUpdateEvent:
				next := nextEvent(recs, i)
				_, nextIsArtifact := next.(*a2a.TaskArtifactUpdateEvent)
				notify = ev.LastChunk || (next != nil && !nextIsArtifact)
			}
			if !notify {
				covered = r.Seq // skipped, or covered by a later notification
				continue
			}
			var alive bool
			if c, alive = p.post(ctx, c, &st.task, r); !alive {
				return // stopping, or the config was deleted
			}
			covered = r.Seq
			if err := p.e.Store.MarkPushDelivered(context.WithoutCancel(ctx), taskID, configID, r.Seq); err != nil {
				p.e.Log.Error("push: advance cursor", "task", taskID, "config", configID, "err", err)
				return
			}
			c.Delivered = r.Seq
		}
		if covered > c.Delivered {
			if err := p.e.Store.MarkPushDelivered(context.WithoutCancel(ctx), taskID, configID, covered); err != nil {
				p.e.Log.Error("push: advance cursor", "task", taskID, "config", configID, "err", err)
				return
			}
			c.Delivered = covered
		}
		if len(recs) <= pushPage {
			return
		}
	}
}

// post delivers one notification, retrying with backoff until it succeeds
// or the event is older than GiveUpAfter. Before each attempt the config
// is read again: a deleted config stops (false); a replaced one is used as
// it is now. It returns the config used, and false when ctx ends.
func (p *Deliverer) post(ctx context.Context, c store.PushConfig, task *a2a.Task, r store.Record) (store.PushConfig, bool) {
	// A 0.3 config gets the Task (A2A 0.3.0 §9.5); a 1.0 config a
	// StreamResponse holding the Task (A2A 1.0 §4.3.3), which carries
	// every event coalesced into this notification.
	marshal := v03.MarshalEvent
	if c.Config.ProtocolVersion == a2a.Version10 {
		marshal = func(e a2a.Event) ([]byte, error) { return v10.AppendStreamResponse(nil, e) }
	}
	body, err := marshal(task)
	if err == nil && len(body) > maxPushBody {
		t := *task
		t.History = nil
		body, err = marshal(&t)
	}
	if err != nil || len(body) > maxPushBody {
		p.e.Log.Error("push: notification not sent: task too large to encode", "task", c.TaskID, "bytes", len(body), "err", err)
		p.e.Tel.PushAbandoned()
		return c, true
	}
	for attempt := 1; ; attempt++ {
		cur, ok, err := p.current(ctx, c.TaskID, c.Config.ID)
		switch {
		case err != nil:
			// The store could not tell: retried as a failed attempt
			// (the config as it was is kept meanwhile).
			err = fmt.Errorf("read the config: %w", err)
		case !ok:
			return c, false // deleted
		case p.claims != nil && !p.claim(c.TaskID, c.Config.ID):
			// Another process took the config over (this one's lease
			// lapsed): it goes on from the cursor.
			return c, false
		default:
			c = cur
			select {
			case p.sem <- struct{}{}:
			case <-ctx.Done():
				return c, false
			}
			err = p.send(ctx, c.Config, c.TaskID, body)
			<-p.sem
		}
		if err == nil {
			return c, true
		}
		if ctx.Err() != nil {
			return c, false
		}
		if time.Since(r.Time) > p.o.GiveUpAfter {
			p.e.Log.Warn("push: giving up on a notification", "task", c.TaskID, "config", c.Config.ID, "seq", r.Seq, "attempts", attempt, "err", err)
			p.e.Tel.PushAbandoned()
			return c, true
		}
		d := min(p.o.RetryBase<<min(attempt-1, 20), p.o.RetryMax)
		d = d/2 + rand.N(d/2+1) // jitter: retries of many tasks do not align
		p.e.Log.Info("push: delivery failed; retrying", "task", c.TaskID, "config", c.Config.ID, "seq", r.Seq, "attempt", attempt, "in", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return c, false
		}
	}
}

// send makes one delivery attempt of a push notification: a POST of body
// to cfg.URL. With telemetry on, the attempt is a client span (its W3C
// traceparent sent to the webhook), the child of the request that started
// the task's latest execution (traceOf: in this process, or as the store
// keeps it), and a2abridge.push.delivery.duration.
func (p *Deliverer) send(ctx context.Context, cfg a2a.PushNotificationConfig, taskID string, body []byte) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if tel := p.e.Tel; tel != nil {
		if tel.Tracing() { // (metrics only: no trace to look up)
			if sc := p.traceOf(ctx, taskID); sc.IsValid() {
				// The attempt joins the trace of the request that
				// started the task's execution, here or in another
				// process.
				ctx = trace.ContextWithSpanContext(ctx, sc)
			}
		}
		var span trace.Span
		ctx, span = tel.ClientSpan(ctx, "push notification", telemetry.KeyTaskID.String(taskID), telemetry.KeyHTTPMethod.String(http.MethodPost))
		start := time.Now()
		defer func() {
			outcome := "delivered"
			if err != nil {
				outcome = "failed"
				span.SetStatus(codes.Error, "delivery failed") // not the text: it may quote the webhook's URL
			}
			span.End()
			tel.Push(time.Since(start), outcome)
		}()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	telemetry.Inject(ctx, req.Header)
	if cfg.Token != "" {
		req.Header.Set(push.HeaderNotificationToken, cfg.Token)
	}
	basic := cfg.Authentication != nil && slices.ContainsFunc(cfg.Authentication.Schemes, func(s string) bool { return strings.EqualFold(s, "Basic") })
	// A 1.0 config's authentication is sent as it is given (A2A 1.0
	// §4.3.3: "Authorization: {scheme} {credentials}").
	scheme10 := ""
	if cfg.ProtocolVersion == a2a.Version10 && cfg.Authentication != nil && len(cfg.Authentication.Schemes) > 0 && cfg.Authentication.Credentials != "" {
		scheme10 = cfg.Authentication.Schemes[0]
	}
	switch {
	case scheme10 != "":
		req.Header.Set("Authorization", scheme10+" "+cfg.Authentication.Credentials)
	case basic && cfg.Authentication.Credentials != "":
		req.Header.Set("Authorization", "Basic "+cfg.Authentication.Credentials)
	case p.o.Signer != nil:
		tok, err := p.o.Signer.Sign(cfg.URL, taskID, body)
		if err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := p.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// Wait returns when every worker has returned.
func (p *Deliverer) Wait() { p.wg.Wait() }

// nextEvent is the event of the record after recs[i], or nil.
func nextEvent(recs []store.Record, i int) a2a.Event {
	if i+1 < len(recs) {
		return recs[i+1].Event
	}
	return nil
}
