package check

import (
	"context"
	"net/http"
	"sync"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/v10"
)

// Checks of A2A 1.0's capability rules (§3.3.4: an undeclared capability
// is answered as such, before anything is looked up), of the idempotent
// push config delete (§3.1.10) and of a subscription that outlives an
// interrupted state (§3.1.6).

func init() {
	register10(
		check10{name: "push-delete-idempotent", section: "§3.1.10", level: Must,
			title:          "Deleting a push config that does not exist succeeds",
			requirement:    "DeleteTaskPushNotificationConfig MUST be idempotent: multiple deletions of the same config have the same effect (§3.1.10); deleting a config id the task does not have (any more) succeeds. Only an unknown task is TaskNotFoundError.",
			recommendation: "Answer the delete of an absent config id on an existing task with success ({} / HTTP 200), as the first delete of it would be.",
			run:            check10PushDeleteIdempotent},
		check10{name: "push-unsupported-first", section: "§3.3.4", level: Must,
			title:          "Without push notifications, every push config operation is PushNotificationNotSupportedError",
			requirement:    "If capabilities.pushNotifications is false or absent, the push notification config operations (Create, Get, List, Delete) MUST return PushNotificationNotSupportedError (§3.3.4): -32003, HTTP 400 (§5.4), whatever the task id (an unknown task too: the capability comes first).",
			recommendation: "Check the push capability before looking the task up: answer every push config operation with PushNotificationNotSupportedError.",
			run:            check10PushUnsupportedFirst},
		check10{name: "extended-card-unsupported", section: "§3.3.4", level: Must,
			title:          "An undeclared extended card is UnsupportedOperationError",
			requirement:    "If capabilities.extendedAgentCard is false or absent, GetExtendedAgentCard MUST return UnsupportedOperationError (§3.3.4): -32004, HTTP 400 (§5.4); ExtendedAgentCardNotConfiguredError is for an agent that declares the capability without a card configured.",
			recommendation: "Answer GetExtendedAgentCard with UnsupportedOperationError when the card does not declare capabilities.extendedAgentCard.",
			run:            check10ExtendedCardUnsupported},
		check10{name: "subscribe-interrupted", section: "§3.1.6", level: Must,
			title:          "SubscribeToTask stays open through an interrupted state",
			requirement:    "SubscribeToTask can be used with any task that is not in a terminal state, and the stream terminates when the task reaches a terminal state (§3.1.6): a subscription to a task in TASK_STATE_INPUT_REQUIRED (or AUTH_REQUIRED) stays open and delivers the updates that the client's next message brings.",
			recommendation: "Keep a SubscribeToTask stream open while the task is interrupted; close it only after a terminal state (SendStreamingMessage, unlike it, ends at the interrupted state).",
			run:            check10SubscribeInterrupted},
	)
}

func check10PushDeleteIdempotent(ctx context.Context, s *suite10) Result {
	if !s.p.capability("pushNotifications") {
		return notApplicable("the card does not declare capabilities.pushNotifications; push-unsupported-first verifies the answer")
	}
	t, res := s.finishedTask(ctx, false)
	if res != nil {
		return *res
	}
	id := "a2a-check-absent-" + newUUID()[:8]
	d := s.do(ctx, s.pushConfigRequest(opDeletePushConfig, http.MethodDelete, t.ID, id))
	if !d.ok {
		return fail("DeleteTaskPushNotificationConfig of config %s, which task %s does not have, answered %s; deletion is idempotent", id, t.ID, d.describe()).with(d.ex)
	}
	return pass("the delete of config %s, which the task does not have, succeeded (%s)", id, d.describe()).with(d.ex)
}

func check10PushUnsupportedFirst(ctx context.Context, s *suite10) Result {
	if s.p.capability("pushNotifications") {
		return notApplicable("the card declares capabilities.pushNotifications; push and push-delete-idempotent verify the operations")
	}
	task := "a2a-check-unknown-" + newUUID()
	replies := []struct {
		name string
		r    *reply10
	}{
		{"CreateTaskPushNotificationConfig", s.do(ctx, s.createPush(a2a.TaskPushNotificationConfig{TaskID: task, PushNotificationConfig: a2a.PushNotificationConfig{URL: fallbackWebhook}}))},
		{"GetTaskPushNotificationConfig", s.do(ctx, s.pushConfigRequest(opGetPushConfig, http.MethodGet, task, "a2a-check-none"))},
		{"ListTaskPushNotificationConfigs", s.do(ctx, s.listPush(task))},
		{"DeleteTaskPushNotificationConfig", s.do(ctx, s.pushConfigRequest(opDeletePushConfig, http.MethodDelete, task, "a2a-check-none"))},
	}
	var evidence []*Exchange
	for _, x := range replies {
		evidence = append(evidence, x.r.ex)
	}
	for _, x := range replies {
		if x.r.err == nil || x.r.err.Code != a2a.CodePushNotificationNotSupported {
			return fail("%s of an unknown task on an agent without push notifications answered %s, not PushNotificationNotSupportedError (-32003)", x.name, x.r.describe()).with(evidence...)
		}
	}
	return pass("Create, Get, List and Delete of an unknown task answered PushNotificationNotSupportedError").with(evidence...)
}

func check10ExtendedCardUnsupported(ctx context.Context, s *suite10) Result {
	if s.p.capability("extendedAgentCard") {
		return notApplicable("the card declares capabilities.extendedAgentCard; extended-card verifies the card")
	}
	if s.p.securityDeclared() && !s.p.hasCredentials() {
		// Authentication comes first: without credentials the answer is
		// a 401, which says nothing of the capability.
		return skip("no credentials given (use --token, --api-key or --header)")
	}
	r := s.do(ctx, s.extendedCard())
	if r.ok {
		return fail("the card does not declare capabilities.extendedAgentCard, but GetExtendedAgentCard returned %s", excerpt(r.body, 80)).with(r.ex)
	}
	if r.err != nil && r.err.Code == a2a.CodeAuthenticatedExtendedCardNotConfigured {
		return fail("GetExtendedAgentCard answered %s: ExtendedAgentCardNotConfiguredError is for a card that declares the capability; an undeclared one is UnsupportedOperationError (-32004)", r.describe()).with(r.ex)
	}
	return expect10(r, "GetExtendedAgentCard (capability not declared)", a2a.CodeUnsupportedOperation)
}

// sameStatus reports whether b restates status a: same state, message
// and timestamp.
func sameStatus(a, b a2a.TaskStatus) bool {
	id := func(s a2a.TaskStatus) string {
		if s.Message == nil {
			return ""
		}
		return s.Message.MessageID
	}
	return a.State == b.State && id(a) == id(b) && a.Timestamp.Equal(b.Timestamp)
}

func check10SubscribeInterrupted(ctx context.Context, s *suite10) Result {
	if r := s.needStreaming(); r != nil {
		return *r
	}
	t, sent, res := s.sendTask(ctx, s.p.opts.Text, true)
	if res != nil {
		return *res
	}
	if !t.Status.State.Interrupted() {
		return skip("the agent did not ask for input: the task is %s (an agent that answers --text with TASK_STATE_INPUT_REQUIRED is needed)", stateName(t.Status.State))
	}
	// Once the subscription's first event is in, the checker continues
	// the task (the same text again); the subscription must deliver
	// that turn's updates.
	var cont *reply10
	contDone := make(chan struct{})
	var once sync.Once
	continueTask := func() {
		once.Do(func() {
			go func() {
				defer close(contDone)
				cont = s.do(ctx, s.send(userMessage(t.ID, t.ContextID, s.p.opts.Text), false))
			}()
		})
	}
	var snap *a2a.TaskStatus
	var turn []string // the next turn's events
	req := s.subscribe(t.ID)
	if req.encErr != nil {
		return fail("%s", s.unencodable(req).Err)
	}
	e := s.streamUntil(ctx, req, streamOpt{onEvent: func(i int, ev SSEEvent) bool {
		f := s.frame(ev)
		switch v := f.ev.(type) {
		case *a2a.Task:
			if snap == nil {
				st := v.Status
				snap = &st
			}
		case *a2a.TaskStatusUpdateEvent:
			if snap != nil && !sameStatus(*snap, v.Status) {
				turn = append(turn, eventName(v))
				if v.Status.State.Final() {
					return true // the next turn is over (terminal: the stream ends anyway)
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			turn = append(turn, eventName(v))
		}
		continueTask()
		return false
	}}, func(ev SSEEvent) bool {
		f := s.frame(ev)
		s.observeEvent(f.ev)
		if st, ok := f.ev.(*a2a.TaskStatusUpdateEvent); ok {
			return st.Status.State.Terminal()
		}
		return f.err != nil
	})
	continueTask()
	<-contDone
	ev := []*Exchange{sent.ex, e, cont.ex}
	defer func() {
		if g := s.do(ctx, s.getTask(t.ID, nil)); g.ok && !terminalTask(g) {
			s.do(ctx, s.cancelTask(t.ID)) // leave no task waiting for input
		}
	}()
	if f := s.streamFailure(e); f != "" {
		return fail("SubscribeToTask of the %s task answered %s", stateName(t.Status.State), f).with(ev...)
	}
	if snap == nil {
		return fail("the first event is %s, not the Task", firstEventName(s.frames(e))).with(ev...)
	}
	if !cont.ok {
		return skip("the message continuing the %s task was refused: %s", stateName(t.Status.State), cont.describe()).with(ev...)
	}
	if len(turn) > 0 {
		return pass("the subscription stayed open through %s and delivered the next turn: %v", stateName(snap.State), turn).with(ev...)
	}
	if e.Closed {
		return fail("the server closed the subscription after %d event(s), with the task %s, instead of keeping it open until a terminal state; the next turn's updates did not come", len(e.Events), stateName(snap.State)).with(ev...)
	}
	return fail("the subscription delivered no update of the next turn (%s)", e.Err).with(ev...)
}

// terminalTask reports whether a GetTask reply holds a task in a terminal state.
func terminalTask(r *reply10) bool {
	g, err := v10.UnmarshalTask(r.body)
	return r.ok && err == nil && g.Status.State.Terminal()
}
