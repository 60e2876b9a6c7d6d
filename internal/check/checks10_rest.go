package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// route is one HTTP+JSON route probed with an unknown task.
type route struct {
	name string
	req  req10
	// want: an A2A error code the answer may have ("" entries: success
	// is the answer).
	stream bool
}

// routes lists the routes of A2A 1.0 §11.3 for an unknown task id.
func (s *suite10) routes() []route {
	id := "a2a-check-unknown-" + newUUID()
	msg := userMessage(id, "", s.p.opts.Text)
	push := a2a.TaskPushNotificationConfig{TaskID: id, PushNotificationConfig: a2a.PushNotificationConfig{URL: fallbackWebhook}}
	return []route{
		{name: "POST /message:send", req: s.send(msg, false)},
		{name: "POST /message:stream", req: s.send(msg, true), stream: true},
		{name: "GET /tasks/{id}", req: s.getTask(id, nil)},
		{name: "GET /tasks", req: s.listTasks(a2a.ListTasksRequest{})},
		{name: "POST /tasks/{id}:cancel", req: s.cancelTask(id)},
		{name: "POST /tasks/{id}:subscribe", req: s.subscribe(id), stream: true},
		{name: "POST /tasks/{id}/pushNotificationConfigs", req: s.createPush(push)},
		{name: "GET /tasks/{id}/pushNotificationConfigs", req: s.listPush(id)},
		{name: "GET /tasks/{id}/pushNotificationConfigs/{configId}", req: s.pushConfigRequest(opGetPushConfig, http.MethodGet, id, "a2a-check-none")},
		{name: "DELETE /tasks/{id}/pushNotificationConfigs/{configId}", req: s.pushConfigRequest(opDeletePushConfig, http.MethodDelete, id, "a2a-check-none")},
		{name: "GET /extendedAgentCard", req: s.extendedCard()},
	}
}

// routeProblem says why the answer to a route is a routing failure (""
// if the route is served: a success, or an A2A error with its ErrorInfo).
func (s *suite10) routeProblem(ctx context.Context, rt route) (string, *Exchange) {
	var r *reply10
	if rt.stream {
		e := s.stream(ctx, rt.req, streamOpt{timeout: min(s.p.timeout, 5e9)})
		r = &reply10{ex: e}
		if isSSE(e) {
			fs := s.frames(e)
			if len(fs) > 0 && fs[0].err != nil {
				r.err = fs[0].err
			} else {
				r.ok = len(fs) > 0
			}
		} else {
			r = s.read(e)
		}
	} else {
		r = s.do(ctx, rt.req)
	}
	switch {
	case r.ex.Status == 0:
		return r.ex.Err, r.ex
	case r.ok:
		return "", r.ex
	case r.ex.Status == http.StatusMethodNotAllowed:
		return "HTTP 405: the route is not served", r.ex
	case r.err != nil && r.err.Code == a2a.CodeMethodNotFound:
		return fmt.Sprintf("HTTP %d without an A2A reason: the route is not served", r.ex.Status), r.ex
	case r.err == nil:
		return r.describe(), r.ex
	}
	return "", r.ex
}

func check10Routes(ctx context.Context, s *suite10) Result {
	var problems []string
	var bad, all []*Exchange
	for _, rt := range s.routes() {
		prob, e := s.routeProblem(ctx, rt)
		all = append(all, e)
		if prob != "" {
			problems = append(problems, rt.name+": "+prob)
			bad = append(bad, e)
		}
	}
	if len(problems) > 0 {
		return fail("%d of %d routes: %s", len(problems), len(all), strings.Join(firstStrings(problems, 4), "; ")).with(firstN(bad, 3)...)
	}
	return pass("all %d routes of §11.3 are served", len(all)).with(firstN(all, 3)...)
}

func check10UnknownPath(ctx context.Context, s *suite10) Result {
	req := req10{op: "(unknown path)", method: http.MethodGet, path: "/a2a-check-no-such-route/" + newUUID()[:8], invalid: true}
	r := s.do(ctx, req)
	switch r.ex.Status {
	case 0:
		return fail("GET of an unknown path: %s", r.ex.Err).with(r.ex)
	case http.StatusNotFound:
		return pass("GET of an unknown path was answered HTTP 404").with(r.ex)
	}
	return fail("GET of an unknown path was answered %s, not 404", statusText(r.ex)).with(r.ex)
}

func check10WrongMethod(ctx context.Context, s *suite10) Result {
	req := s.send(userMessage("", "", s.p.opts.Text), false)
	req.method, req.op, req.invalid = http.MethodDelete, "(DELETE /message:send)", true
	r := s.do(ctx, req)
	switch {
	case r.ex.Status == 0:
		return fail("DELETE /message:send: %s", r.ex.Err).with(r.ex)
	case r.ex.Status != http.StatusMethodNotAllowed:
		return fail("DELETE /message:send was answered %s, not 405", statusText(r.ex)).with(r.ex)
	case r.ex.RespHeader.Get("Allow") == "":
		return fail("the 405 answer has no Allow header").with(r.ex)
	}
	return pass("DELETE /message:send was answered 405, Allow: %s", r.ex.RespHeader.Get("Allow")).with(r.ex)
}
