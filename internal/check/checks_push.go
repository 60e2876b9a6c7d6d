package check

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fallbackWebhook is used for the push config methods when the server
// refuses the loopback receiver: a name that never resolves, so nothing
// is ever delivered anywhere. A server that resolves webhook hosts when
// they are set (a2abridge serve does) refuses it too; the config checks
// are then skipped.
const fallbackWebhook = "http://a2a-check.invalid/webhook"

func init() {
	register(
		&Check{ID: "push.set", Category: "push", Section: "§7.5", Level: Must,
			Title:          "tasks/pushNotificationConfig/set stores a config",
			Requirement:    "With capabilities.pushNotifications: true, tasks/pushNotificationConfig/set sets a task's push configuration and returns the TaskPushNotificationConfig (§7.5, §6.10).",
			Recommendation: "Store the config and answer with {taskId, pushNotificationConfig:{id, url, token, …}}.",
			Run:            checkPushSet},
		&Check{ID: "push.get", Category: "push", Section: "§7.6", Level: Must,
			Title:          "tasks/pushNotificationConfig/get returns the config",
			Requirement:    "tasks/pushNotificationConfig/get returns the task's TaskPushNotificationConfig (§7.6); with pushNotificationConfigId, that config.",
			Recommendation: "Answer get {id, pushNotificationConfigId} with the stored config.",
			Run:            checkPushGet},
		&Check{ID: "push.list", Category: "push", Section: "§7.7", Level: Should,
			Title:          "tasks/pushNotificationConfig/list lists the config",
			Requirement:    "tasks/pushNotificationConfig/list returns the task's configs as an array of TaskPushNotificationConfig (§7.7).",
			Recommendation: "Implement list: answer an array with every config of the task.",
			Run:            checkPushList},
		&Check{ID: "push.delete", Category: "push", Section: "§7.8", Level: Should,
			Title:          "tasks/pushNotificationConfig/delete removes the config",
			Requirement:    "tasks/pushNotificationConfig/delete deletes a config; the result is null on success (§7.8), so the response has \"result\": null; the config is gone afterwards.",
			Recommendation: "Implement delete, answer {\"result\": null}, and answer a later get of that config with an error.",
			Run:            checkPushDelete},
		&Check{ID: "push.delivery", Category: "push", Section: "§9.5", Level: Should,
			Title:          "A notification reaches the webhook",
			Requirement:    "When a task has a push config, the server POSTs notifications about its updates to the webhook url (§9.5; Streaming & Async §2): the Task as JSON.",
			Recommendation: "POST the Task to the webhook on state changes (at least the final one), with Content-Type application/json.",
			Run:            checkPushDelivery},
		&Check{ID: "push.token", Category: "push", Section: "§9.5", Level: Should,
			Title:          "Notifications carry the config's token",
			Requirement:    "The server SHOULD include the config's token in each notification, e.g. in X-A2A-Notification-Token (§9.5; Streaming & Async §2), so the receiver can validate it.",
			Recommendation: "Send X-A2A-Notification-Token: <token> with every notification.",
			Run:            checkPushToken},
	)
}

// pushState is the config the push checks share.
type pushState struct {
	task     taskRef
	id, url  string
	token    string
	set      *rpcResp
	refused  string // why the loopback webhook was refused ("" if not)
	fallback bool
}

func (p *Probe) pushConfig(ctx context.Context) (pushState, *Result) {
	if r := p.needCapability("pushNotifications"); r != nil {
		return pushState{}, r
	}
	return cached(p, "push", func() (pushState, *Result) {
		t, res := p.runningTask(ctx)
		if res != nil {
			if t, res = p.terminalTask(ctx, false); res != nil {
				return pushState{}, res
			}
		}
		hook, err := p.webhook()
		if err != nil {
			r := skip("could not start the local webhook receiver: %v", err)
			return pushState{}, &r
		}
		ps := pushState{task: t, id: "a2a-check-" + newUUID()[:8], token: "a2a-check-token-" + newUUID()[:8]}
		ps.url = hook.base + "/a2a-check/" + ps.id
		set := func(u string) *rpcResp {
			return p.call(ctx, "tasks/pushNotificationConfig/set", map[string]any{"taskId": t.ID,
				"pushNotificationConfig": map[string]any{"id": ps.id, "url": u, "token": ps.token}})
		}
		ps.set = set(ps.url)
		p.pushTasks = append(p.pushTasks, t.ID)
		if looksLikeURLRefusal(ps.set) {
			ps.refused = fmt.Sprintf("the server refused the loopback webhook %s: %s", ps.url, ps.set.describe())
			ps.url, ps.fallback = fallbackWebhook, true
			ps.set = set(ps.url)
		}
		return ps, nil
	})
}

// configOf reads a TaskPushNotificationConfig.
func configOf(m map[string]any) (taskID, id, url string) {
	c, _ := m["pushNotificationConfig"].(map[string]any)
	return str(m, "taskId"), str(c, "id"), str(c, "url")
}

func checkPushSet(ctx context.Context, p *Probe) Result {
	ps, res := p.pushConfig(ctx)
	if res != nil {
		return *res
	}
	r := ps.set
	m := r.resultObj()
	note := ""
	if ps.fallback {
		if looksLikeURLRefusal(r) {
			// Nothing left to set without sending notifications elsewhere.
			return skip("%s, and %s too: %s (a2abridge serve needs --push-allow 127.0.0.0/8)", ps.refused, fallbackWebhook, r.describe()).with(r.ex)
		}
		note = fmt.Sprintf(" (with %s, because %s)", fallbackWebhook, ps.refused)
	}
	if r.Err != nil || m == nil {
		return fail("tasks/pushNotificationConfig/set answered %s%s", r.describe(), note).with(r.ex)
	}
	taskID, _, u := configOf(m)
	switch {
	case taskID != ps.task.ID:
		return fail("the answer names task %q, not %s", taskID, ps.task.ID).with(r.ex)
	case u != ps.url:
		return fail("the answer's url is %q, not the %s sent", u, ps.url).with(r.ex)
	}
	return pass("the config was stored%s", note).with(r.ex)
}

func checkPushGet(ctx context.Context, p *Probe) Result {
	ps, res := p.pushConfig(ctx)
	if res != nil {
		return *res
	}
	if ps.set.Err != nil || !ps.set.HasResult {
		return skip("tasks/pushNotificationConfig/set failed (%s)", ps.set.describe())
	}
	r := p.call(ctx, "tasks/pushNotificationConfig/get", map[string]any{"id": ps.task.ID, "pushNotificationConfigId": ps.id})
	m := r.resultObj()
	if r.Err != nil || m == nil {
		return fail("tasks/pushNotificationConfig/get answered %s", r.describe()).with(r.ex)
	}
	if _, _, u := configOf(m); u != ps.url {
		return fail("get returned url %q; the config set has %s", u, ps.url).with(r.ex)
	}
	return pass("get returned the config").with(r.ex)
}

func checkPushList(ctx context.Context, p *Probe) Result {
	ps, res := p.pushConfig(ctx)
	if res != nil {
		return *res
	}
	if ps.set.Err != nil || !ps.set.HasResult {
		return skip("tasks/pushNotificationConfig/set failed (%s)", ps.set.describe())
	}
	r := p.call(ctx, "tasks/pushNotificationConfig/list", map[string]any{"id": ps.task.ID})
	if r.Err != nil || !r.HasResult {
		return fail("tasks/pushNotificationConfig/list answered %s", r.describe()).with(r.ex)
	}
	arr, ok := decode(r.Result).([]any)
	if !ok {
		return fail("list returned %s, not an array", summarizeResult(r.resultObj(), r.Result)).with(r.ex)
	}
	for _, c := range arr {
		m, _ := c.(map[string]any)
		if _, id, u := configOf(m); u == ps.url && (id == ps.id || id == "") {
			return pass("list returned %d config(s), including the one set", len(arr)).with(r.ex)
		}
	}
	return fail("list returned %d config(s), not the one set (%s)", len(arr), ps.id).with(r.ex)
}

func checkPushDelete(ctx context.Context, p *Probe) Result {
	ps, res := p.pushConfig(ctx)
	if res != nil {
		return *res
	}
	if ps.set.Err != nil || !ps.set.HasResult {
		return skip("tasks/pushNotificationConfig/set failed (%s)", ps.set.describe())
	}
	params := map[string]any{"id": ps.task.ID, "pushNotificationConfigId": ps.id}
	d := p.call(ctx, "tasks/pushNotificationConfig/delete", params)
	switch {
	case d.Err != nil:
		return fail("tasks/pushNotificationConfig/delete answered %s", d.describe()).with(d.ex)
	case d.obj == nil:
		return fail("tasks/pushNotificationConfig/delete answered %s", d.describe()).with(d.ex)
	case !d.HasResult:
		return fail("delete answered with neither result nor error; success is \"result\": null").with(d.ex)
	case string(d.Result) != "null":
		return fail("delete answered result %s; the result of a deletion is null", excerpt(d.Result, 80)).with(d.ex)
	}
	g := p.call(ctx, "tasks/pushNotificationConfig/get", params)
	if g.Err == nil && g.HasResult {
		if _, _, u := configOf(g.resultObj()); u == ps.url {
			return fail("after delete, get still returns the config").with(d.ex, g.ex)
		}
	}
	return pass("delete answered result null; get then answered %s", g.describe()).with(d.ex, g.ex)
}

// delivery is the outcome of the delivery probe (cached).
type delivery struct {
	n     notification
	ok    bool
	token string
	send  *rpcResp
	wait  time.Duration
}

func (p *Probe) delivery(ctx context.Context) (delivery, *Result) {
	ps, res := p.pushConfig(ctx)
	if res != nil {
		return delivery{}, res
	}
	return cached(p, "delivery", func() (delivery, *Result) {
		if ps.refused != "" {
			r := skip("%s (a2abridge serve needs --push-allow 127.0.0.0/8)", ps.refused)
			return delivery{}, &r
		}
		hook, err := p.webhook()
		if err != nil {
			r := skip("could not start the local webhook receiver: %v", err)
			return delivery{}, &r
		}
		d := delivery{token: "a2a-check-token-" + newUUID()[:8], wait: min(p.timeout, 5*time.Second)}
		path := "/a2a-check/delivery-" + newUUID()[:8]
		d.send = p.call(ctx, "message/send", sendParams(message("", "", textPart(p.opts.Text)), map[string]any{
			"blocking": false, "pushNotificationConfig": map[string]any{"url": hook.base + path, "token": d.token}}))
		if looksLikeURLRefusal(d.send) {
			r := skip("the server refused the loopback webhook %s: %s (a2abridge serve needs --push-allow 127.0.0.0/8)", hook.base+path, d.send.describe())
			return delivery{}, &r
		}
		t, ok := asTask(d.send)
		if !ok {
			r := fail("message/send with a pushNotificationConfig answered %s", d.send.describe()).with(d.send.ex)
			return delivery{}, &r
		}
		p.pushTasks = append(p.pushTasks, t.ID)
		d.n, d.ok = hook.wait(ctx, d.wait, func(n notification) bool {
			return n.Path == path && strings.Contains(string(n.Body), t.ID)
		})
		return d, nil
	})
}

func checkPushDelivery(ctx context.Context, p *Probe) Result {
	d, res := p.delivery(ctx)
	if res != nil {
		return *res
	}
	if !d.ok {
		return fail("no notification reached the webhook within %s of message/send with a pushNotificationConfig (%s)", d.wait, d.send.describe()).with(d.send.ex)
	}
	state := str(decodeObj(d.n.Body), "status", "state")
	ct := d.n.Header.Get("Content-Type")
	msg := fmt.Sprintf("%s %s arrived (%s, %d bytes", d.n.Method, d.n.Path, ct, len(d.n.Body))
	if state != "" {
		msg += ", task " + state
	}
	return pass("%s)", msg).with(d.send.ex)
}

func decodeObj(b []byte) map[string]any {
	m, _ := decode(b).(map[string]any)
	return m
}

func checkPushToken(ctx context.Context, p *Probe) Result {
	d, res := p.delivery(ctx)
	if res != nil {
		return *res
	}
	if !d.ok {
		return skip("no notification arrived (see push.delivery)")
	}
	got := d.n.Header.Get("X-A2A-Notification-Token")
	switch {
	case got == d.token:
		return pass("X-A2A-Notification-Token carries the config's token").with(d.send.ex)
	case got == "":
		return fail("the notification has no X-A2A-Notification-Token header").with(d.send.ex)
	}
	return fail("X-A2A-Notification-Token is %q, not the config's token", got).with(d.send.ex)
}
