package interop

// OUR client SDK and CLI speaking A2A 0.3 over HTTP+JSON (/v1/…,
// --protocol 0.3 --binding rest) against the 0.3 HTTP+JSON servers of the
// official 1.x SDKs' legacy-compat modes (a2a-go v2's a2acompat/a2av0,
// @a2a-js/sdk 1.3.0's legacyCompat), asserting where they depart from
// a2abridge (interop/V03_REST_NOTES.md). The same scenarios against
// `a2abridge serve` are TestOurClient's "a2abridge-rest" target.

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/client"
	"github.com/a2abridge/a2abridge/internal/testutil"
)

// ocV1Compat03REST runs every operation over the compat server's 0.3
// HTTP+JSON interface, which the client picks only when forced (1.0 wins,
// and within 0.3 the card prefers JSON-RPC).
func ocV1Compat03REST(t *testing.T, tg *ocV1Target) {
	ctx := ocCtx(t)
	if c, err := client.Dial(ctx, tg.url("echo"), client.Options{Binding: a2a.TransportHTTPJSON}); err != nil || c.Interface().ProtocolVersion != a2a.Version10 {
		t.Fatalf("--binding rest alone on a compat card: %v, %v", c, err)
	}
	if c, err := client.Dial(ctx, tg.url("echo"), client.Options{Protocol: a2a.Version03}); err != nil || c.Interface().Binding != a2a.TransportJSONRPC {
		t.Fatalf("--protocol 0.3 alone on a compat card: %v, %v", c, err)
	}
	dial := func(agent string) *client.Client {
		c, err := client.Dial(ctx, tg.url(agent), client.Options{Protocol: a2a.Version03, Binding: a2a.TransportHTTPJSON})
		if err != nil {
			t.Fatalf("client.Dial(%s) 0.3 rest: %v", tg.url(agent), err)
		}
		if in := c.Interface(); in.ProtocolVersion != a2a.Version03 || in.Binding != a2a.TransportHTTPJSON {
			t.Fatalf("interface %s, want A2A 0.3 HTTP+JSON", in)
		}
		return c
	}
	echo, slow := dial("echo"), dial("slow")

	task := ocSend(t, ctx, echo, ocMsg("over 0.3 rest", "", ""))
	if task.Status.State != a2a.TaskStateCompleted || testutil.ArtifactText(task) != "over 0.3 rest" {
		t.Errorf("send: state %s artifact %q", task.Status.State, testutil.ArtifactText(task))
	}
	ocREST03FileEcho(t, ctx, tg, echo)

	got, err := echo.GetTask(ctx, a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("get: %+v %v", got, err)
	}
	_, err = echo.GetTask(ctx, a2a.GetTaskRequest{ID: "no-such-task"})
	ocWantErr(t, "get of an unknown task", err, a2a.ErrTaskNotFound)

	evs, err := collectN(echo.SendStreamingMessage(ctx, ocMsg("streamed", "", "")), 20)
	if err != nil {
		t.Fatalf("stream: %v after %s", err, ocDescribe(evs))
	}
	ocFinal(t, evs, a2a.TaskStateCompleted)

	running := ocSend(t, ctx, slow, ocNonBlocking(ocMsg("1", "", "")))
	evs, err = collectN(slow.SubscribeToTask(ctx, a2a.SubscribeToTaskRequest{ID: running.ID}, ""), 50)
	if err != nil {
		t.Fatalf("subscribe: %v after %s", err, ocDescribe(evs))
	}
	ocFinal(t, evs, a2a.TaskStateCompleted)

	long := ocSend(t, ctx, slow, ocNonBlocking(ocMsg("30", "", "")))
	canceled, err := slow.CancelTask(ctx, a2a.CancelTaskRequest{ID: long.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("cancel: %+v %v", canceled, err)
	}
	_, err = echo.CancelTask(ctx, a2a.CancelTaskRequest{ID: task.ID})
	ocWantErr(t, "cancel of a completed task", err, a2a.ErrTaskNotCancelable)

	ocV1PushCRUD(t, ctx, tg, slow)
	_, err = echo.GetExtendedAgentCard(ctx)
	want := tg.quirks().extendedCard
	if tg.kind == v1Ours {
		want = a2a.ErrAuthenticatedExtendedCardNotConfigured // 0.3's answer (1.0 answers -32004)
	}
	ocWantErr(t, "GetExtendedAgentCard", err, want)

	// The CLI: --json prints the 0.3 objects.
	cli := func(args ...string) cliResult {
		return runCLI(t, "", append(args, "--protocol", "0.3", "--binding", "rest")...)
	}
	r := cli("send", tg.url("echo"), "cli hello")
	r.want(t, "send", 0, 1)
	id := jstr(r.lines[0], "id")
	if jstr(r.lines[0], "kind") != "task" || jstr(r.lines[0], "status", "state") != "completed" || jstr(r.lines[0], "artifacts", 0, "parts", 0, "text") != "cli hello" {
		t.Fatalf("cli send: %s", r.stdout)
	}
	r = cli("get", tg.url("echo"), id)
	r.want(t, "get", 0, 1)
	if jstr(r.lines[0], "id") != id {
		t.Errorf("cli get: %s", r.stdout)
	}
	cli("get", tg.url("echo"), "no-such-task").wantA2AError(t, "cli get of an unknown task", a2a.ErrTaskNotFound)
	r = cli("stream", tg.url("echo"), "cli stream")
	if r.code != 0 || len(r.lines) < 2 || jstr(r.lines[len(r.lines)-1], "status", "state") != "completed" {
		t.Errorf("cli stream: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// ocREST03FileEcho sends file bytes to the echo agent. a2a-go v2 reads
// and writes fileWithBytes as base64 of base64 (V03_REST_NOTES.md §1): the
// bytes "abc", which we send once encoded ("YWJj"), do not decode for it,
// and it answers the part as {} (in the artifact and the history), which
// our client reports as a *ProtocolError naming the part; bytes that are
// base64 text themselves ("YWJj", on the wire "WVdKag==") reach its agent
// as "abc" and come back as they were sent. The JS server reads the proto
// bytes once, as we write them, but drops the file's name.
func ocREST03FileEcho(t *testing.T, ctx context.Context, tg *ocV1Target, c *client.Client) {
	t.Helper()
	send := func(b []byte) (*a2a.Task, error) {
		p := ocMsg("file", "", "")
		p.Message.Parts = append(p.Message.Parts, a2a.Part{Content: a2a.Raw(b), MediaType: "text/plain", Filename: "f.txt"})
		res, err := c.SendMessage(ctx, p)
		if err != nil {
			return nil, err
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("send: %T, want a Task", res)
		}
		return task, nil
	}
	plain, b64 := []byte("abc"), []byte(base64.StdEncoding.EncodeToString([]byte("abc")))
	if tg.kind == v1GoPeer {
		_, err := send(plain)
		var pe *client.ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "part has none of text, file or data") ||
			!strings.Contains(err.Error(), "/task/artifacts/0/parts/1") {
			t.Errorf("a2a-go v2 with once-encoded bytes: %v (%T), want a *ProtocolError for /task/artifacts/0/parts/1", err, err)
		}
		plain = b64
	}
	task, err := send(plain)
	if err != nil {
		t.Fatalf("send file: %v", err)
	}
	f := task.Artifacts[0].Parts[1]
	_, ok := f.Content.(a2a.Raw)
	name := "f.txt"
	if tg.kind == v1JSPeer {
		name = ""
	}
	if !ok || string(f.Raw()) != string(plain) || f.Filename != name || f.MediaType != "text/plain" {
		t.Errorf("echoed file %+v, want the bytes %q", task.Artifacts[0].Parts, plain)
	}
}
