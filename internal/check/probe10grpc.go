package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/grpcdial"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
	v10 "github.com/a2abridge/a2abridge/internal/wire/v10"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The gRPC suite (grpc10.*) sends each check's request in protobuf's
// binary encoding (internal/wire/pb) to the A2A service of the card's
// GRPC interface, through the connection package client/grpc provides
// (internal/grpcdial). Its exchanges are recorded in the forms the HTTP
// suites read: the request and each answer as their A2A 1.0 JSON
// (ProtoJSON), an error status as the google.rpc.Status document of
// HTTP+JSON ({"error": {code, status, message, details}}) with the HTTP
// status its gRPC code corresponds to, the gRPC status itself in
// Exchange.GRPCStatus; so the checks judge the A2A semantics once for
// every binding.

// grpcService is the A2A service's full name (a2a.proto).
const grpcService = "lf.a2a.v1.A2AService"

// grpcAnswers turn each operation's answer into its A2A 1.0 JSON.
var grpcAnswers = map[string]func([]byte) ([]byte, error){
	opSendMessage: func(b []byte) ([]byte, error) {
		ev, err := pb.UnmarshalSendMessageResponse(b)
		if err != nil {
			return nil, err
		}
		return v10.AppendSendMessageResponse(nil, ev)
	},
	opGetTask:    grpcTask,
	opCancelTask: grpcTask,
	opListTasks: func(b []byte) ([]byte, error) {
		r, err := pb.UnmarshalListTasksResponse(b)
		if err != nil {
			return nil, err
		}
		// Artifacts are in the JSON when the answer has any: protobuf
		// does not tell an empty list from none.
		with := slices.ContainsFunc(r.Tasks, func(t a2a.Task) bool { return len(t.Artifacts) > 0 })
		return v10.AppendListTasksResponse(nil, &r, with)
	},
	opCreatePushConfig: grpcPushConfig,
	opGetPushConfig:    grpcPushConfig,
	opListPushConfigs: func(b []byte) ([]byte, error) {
		cs, next, err := pb.UnmarshalListTaskPushNotificationConfigsResponse(b)
		if err != nil {
			return nil, err
		}
		return v10.AppendListTaskPushNotificationConfigsResponse(nil, cs, next)
	},
	opDeletePushConfig: func([]byte) ([]byte, error) { return []byte("{}"), nil },
	opGetExtendedCard: func(b []byte) ([]byte, error) {
		c, err := pb.UnmarshalAgentCard(b)
		if err != nil {
			return nil, err
		}
		return v10.MarshalAgentCard(&c, v10.CardOptions{})
	},
}

func grpcTask(b []byte) ([]byte, error) {
	t, err := pb.UnmarshalTask(b)
	if err != nil {
		return nil, err
	}
	return v10.AppendTask(nil, &t)
}

func grpcPushConfig(b []byte) ([]byte, error) {
	c, err := pb.UnmarshalTaskPushNotificationConfig(b)
	if err != nil {
		return nil, err
	}
	return v10.AppendTaskPushNotificationConfig(nil, &c)
}

// setupGRPC connects the suite to its interface's gRPC target: TLS
// unless the card came over http://. It returns why it cannot.
func (s *suite10) setupGRPC(it Interface) string {
	target := strings.TrimPrefix(it.URL, "dns:///")
	if host, port, err := net.SplitHostPort(target); err != nil || host == "" || port == "" || strings.ContainsAny(target, "/?#@") {
		return fmt.Sprintf("the %s interface's url %q is not a gRPC target (host:port)", it.Name(), it.URL)
	}
	if grpcdial.Dial == nil {
		return "this build of the checker speaks no gRPC"
	}
	conn, err := grpcdial.Dial(it.URL, grpcdial.Options{TLS: !strings.HasPrefix(strings.ToLower(s.p.opts.URL), "http:"), MaxRecvBytes: maxBody})
	if err != nil {
		return fmt.Sprintf("the %s interface %s: %v", it.Name(), it.URL, err)
	}
	s.conn, s.target = conn, target
	return ""
}

// grpcMetadata is the metadata of a request: A2A-Version, the extensions
// the card requires, credentials (to the checked host, on any port) and
// extra (key, value pairs).
func (s *suite10) grpcMetadata(r req10, extra ...string) ([]string, http.Header) {
	req := &http.Request{URL: &url.URL{Scheme: "https", Host: s.target}, Header: http.Header{}}
	switch r.version {
	case "":
		req.Header.Set(versionHeader, a2a.Version10)
	case noVersion:
	default:
		req.Header.Set(versionHeader, r.version)
	}
	if exts := s.p.requiredExtensions(); exts != "" && !r.noExt {
		req.Header.Set("A2A-Extensions", exts)
	}
	if base, err := url.Parse(s.p.opts.URL); err == nil && strings.EqualFold(base.Hostname(), req.URL.Hostname()) {
		req.URL.Host = base.Host // the checked host: credentials go there, on any port
	}
	s.p.applyAuth(req)
	md := make([]string, 0, 2*len(req.Header)+len(extra))
	for k, vs := range req.Header {
		for _, v := range vs {
			md = append(md, strings.ToLower(k), v)
		}
	}
	return append(md, extra...), req.Header
}

// grpcExchange is the exchange of request r: its URL names the target
// and method, its request body is r's JSON.
func (s *suite10) grpcExchange(r req10, stream bool) *Exchange {
	return &Exchange{Method: "gRPC", URL: "grpc://" + s.target + "/" + grpcService + "/" + r.op, RPCMethod: r.op, ReqBody: r.params,
		Schema: resultDefinition[r.op], Invalid: r.invalid, Suite: s.key, Stream: stream}
}

// grpcFailed records err, the end of a call, in e: a status as the
// google.rpc.Status document, anything else as a transport error.
func (s *suite10) grpcFailed(e *Exchange, err error) {
	var st *grpcdial.Status
	switch {
	case errors.As(err, &st) && (st.Info != nil || st.Code != 14):
		e.GRPCStatus = st.Name
		e.Status = grpcdial.HTTPStatus(st.Code)
		e.RespBody = statusDocument(st)
	case errors.As(err, &st):
		e.Err = fmt.Sprintf("gRPC %s: %s", st.Name, st.Message) // the target cannot be reached
	case errors.Is(err, context.DeadlineExceeded):
		e.Err = fmt.Sprintf("no complete answer within %s", s.p.timeout)
	default:
		e.Err = err.Error()
	}
}

// statusDocument is a gRPC status as HTTP+JSON writes one (A2A 1.0
// §11.6).
func statusDocument(st *grpcdial.Status) []byte {
	b := []byte(`{"error":{"code":`)
	b = strconv.AppendInt(b, int64(st.Code), 10)
	b = append(b, `,"status":`...)
	b, _ = wirejson.AppendString(b, st.Name)
	b = append(b, `,"message":`...)
	b, _ = wirejson.AppendString(b, strings.ToValidUTF8(st.Message, "\uFFFD"))
	if i := st.Info; i != nil {
		b = append(b, `,"details":[{"@type":`...)
		b, _ = wirejson.AppendString(b, v10.TypeErrorInfo)
		b = append(b, `,"reason":`...)
		b, _ = wirejson.AppendString(b, strings.ToValidUTF8(i.Reason, "\uFFFD"))
		b = append(b, `,"domain":`...)
		b, _ = wirejson.AppendString(b, strings.ToValidUTF8(i.Domain, "\uFFFD"))
		if len(i.Metadata) > 0 {
			m := make(map[string]any, len(i.Metadata))
			for k, v := range i.Metadata {
				m[strings.ToValidUTF8(k, "\uFFFD")] = strings.ToValidUTF8(v, "\uFFFD")
			}
			b = append(b, `,"metadata":`...)
			b, _ = wirejson.AppendAny(b, m)
		}
		b = append(b, "}]"...)
	}
	return append(b, "}}"...)
}

// doGRPC sends a unary request over gRPC and records it.
func (s *suite10) doGRPC(ctx context.Context, r req10) *Exchange {
	e := s.grpcExchange(r, false)
	defer s.p.record(e)
	if r.pb == nil {
		e.Err = "the request has no gRPC form"
		return e
	}
	ctx, cancel := context.WithTimeout(ctx, s.p.timeout)
	defer cancel()
	md, h := s.grpcMetadata(r)
	e.ReqHeader = keep(h, true)
	start := time.Now()
	b, err := s.conn.Invoke(ctx, r.op, md, r.pb)
	e.Duration = time.Since(start)
	if err != nil {
		s.grpcFailed(e, err)
		return e
	}
	e.Status, e.GRPCStatus = http.StatusOK, "OK"
	if render := grpcAnswers[r.op]; render != nil {
		if e.RespBody, err = render(b); err != nil {
			e.Status, e.RespBody = http.StatusOK, nil
			e.Err = "the answer is not the operation's message in protobuf: " + err.Error()
		}
	}
	return e
}

// streamGRPC opens a server stream over gRPC and records its events as
// SSE events would be: each StreamResponse's JSON, its id the event's
// sequence number when the frame carries one (the event-log extension,
// activated when the card declares it), and the stream's error status as
// an "error" event holding the google.rpc.Status document.
func (s *suite10) streamGRPC(ctx context.Context, r req10, so streamOpt, ends func(SSEEvent) bool) *Exchange {
	e := s.grpcExchange(r, true)
	defer s.p.record(e)
	if r.pb == nil {
		e.Err = "the request has no gRPC form"
		return e
	}
	limit, closeWait := s.p.streamLimits(so)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var extra []string
	if s.p.declaresExtension(a2a.ExtensionEventLog) {
		extra = append(extra, "a2a-extensions", a2a.ExtensionEventLog)
	}
	if so.lastEventID != "" {
		extra = append(extra, "last-event-id", so.lastEventID)
	}
	md, h := s.grpcMetadata(r, extra...)
	e.ReqHeader = keep(h, true)
	start := time.Now()
	defer func() { e.Duration = time.Since(start) }()
	st, err := s.conn.Stream(ctx, r.op, md, r.pb)
	if err != nil {
		s.grpcFailed(e, err)
		return e
	}
	defer st.Close()
	// A status, not a broken connection: an answer of the server's.
	answered := func(err error) (*grpcdial.Status, bool) {
		var gs *grpcdial.Status
		return gs, errors.As(err, &gs) && (gs.Info != nil || gs.Code != 14)
	}
	b, err := st.Recv()
	if gs, ok := answered(err); ok {
		s.grpcFailed(e, gs) // refused before its first event: an error answer
		e.Stream = false
		return e
	}
	e.Status, e.GRPCStatus = http.StatusOK, "OK"
	first := true
	s.p.collect(ctx, e, start, limit, closeWait, so, ends, func() (SSEEvent, bool, error) {
		if !first {
			b, err = st.Recv()
		}
		first = false
		if err != nil {
			if gs, ok := answered(err); ok && !errors.Is(err, io.EOF) {
				return SSEEvent{Event: "error", Data: statusDocument(gs)}, true, nil
			}
			return SSEEvent{}, false, err
		}
		evt, seq, err := pb.UnmarshalStreamResponseSeq(b)
		var data []byte
		if err == nil {
			data, err = v10.AppendStreamResponse(nil, evt)
		}
		if err != nil {
			data = []byte(fmt.Sprintf(`{"a2a-check":"not a StreamResponse in protobuf: %s"}`, strings.ReplaceAll(err.Error(), `"`, `'`)))
		}
		ev := SSEEvent{Data: data}
		if seq > 0 {
			ev.ID = strconv.FormatInt(seq, 10)
		}
		return ev, false, nil
	})
	if n := len(e.Events); n > 0 && e.Events[n-1].Event == "error" {
		// The status that ended the stream (statusDocument).
		st, _ := decodeObj(e.Events[n-1].Data)["error"].(map[string]any)
		e.GRPCStatus = str(st, "status")
	}
	return e
}
