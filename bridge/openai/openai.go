// Package openai bridges an OpenAI-compatible chat completions endpoint
// (vLLM, llama.cpp's server, Ollama, LM Studio, hosted APIs) to A2A: an
// Agent answers each A2A message with the model's completion, streamed
// token by token as artifact chunks. It is the "openai" kind of
// `a2abridge serve --config`, and a library: give an Agent to
// server.NewHandler like any other agent.
//
// # What is sent
//
// POST {base_url}/chat/completions with "stream": true and
// "stream_options": {"include_usage": true}, through the official client
// (github.com/openai/openai-go). The messages are: the system prompt
// (Config.System), the conversation history (Config.History), and the new
// message as a "user" message whose text is the A2A message's parts, one
// per line: a text part as is, a data part as its JSON, a file part
// described as "[file NAME (TYPE), N bytes]" or "[file NAME (TYPE) at
// URI]" (its content is not sent).
//
// Conversation history: without MultiTurn, the earlier tasks of the same
// contextId (A2A 1.0 §3.4.1: a client keeps a conversation by reusing the
// contextId), oldest first: each task's user message and its answer (the
// text of its artifacts); tasks without an answer are left out. With
// MultiTurn, the task's own earlier turns. At most Config.History
// messages are sent, the most recent, starting with a user message, and
// at most Config.MaxHistoryBytes (DefaultMaxHistoryBytes, 256 KiB) of
// text together: texts are built newest first and cut while they are
// built, the message that crosses the bound keeps its beginning and ends
// with " […]", older ones are left out (an answer that does not fit gets
// half of what is left, so that its question is sent too).
//
// # What the client sees
//
// A task moves to working, then each streamed delta becomes a chunk of
// one artifact named "response" (TextPart; the first chunk with
// append=false, the next ones append=true, the last lastChunk=true; in
// the task the server joins them into one text part), and the task
// completes. Its
// metadata (A2A 0.3.0 §6.1) gets, under MetadataUsage, the token usage
// {"prompt_tokens", "completion_tokens", "total_tokens"} when the
// endpoint reports it, under MetadataModel the model that answered, and
// under MetadataFinishReason the finish reason ("stop", "length", ...):
// an answer cut by max_tokens ("length") completes the task too.
//
// With Config.MultiTurn the task does not complete: after each answer it
// waits in input-required with the answer text as its status message, and
// the client's next message to the same task (taskId) continues the
// conversation; each turn's answer is a new "response" artifact, and the
// usage in the metadata is the sum over the turns. The conversation has
// no end word: it stays open (input-required) until the client cancels
// the task.
//
// Failures fail the task with a status message that says what went wrong
// and never contains the API key: the endpoint rejected the API key
// (401), the model is not found at base_url (404), rate limited (429,
// after the retries, which wait as long as Retry-After asks), the
// endpoint failed (5xx), no complete answer within the timeout, the model
// refused (a "refusal" delta, or finish_reason "content_filter"; the
// refusal text is the status message), the endpoint cannot be reached
// (connection refused, unknown host), the stream ended before the
// answer was finished. An answer that got its finish_reason completes
// even if the stream then breaks. Canceling the task (tasks/cancel)
// cancels the execution's context, which aborts the upstream request at
// once (the agent needs no server.Canceler).
//
// # Local AI operations: ai/chat, ai/embeddings, ai/rerank
//
// Beside A2A, the agent's JSON-RPC endpoint can answer three JSON-RPC 2.0
// methods of its own (Agent.Methods, for server.HandlerOptions.Methods;
// `a2abridge serve` attaches them to every openai agent unless
// ai_methods: false), declared in its card as the extension ExtensionURI
// (Agent.CardExtension). They are served whatever A2A-Version a request
// names, in batches (except a streaming ai/chat), and need the agent's
// authentication. Behind them is a Provider: the agent's endpoint through
// NewHTTPProvider, or one's own through Methods. Params are strict JSON
// objects: members are case-sensitive, unknown ones are refused.
//
// The methods spend the agent's api_key on its callers' requests, so they
// are confined to what the configuration names. A call may name only the
// configured models (Config.Model, EmbeddingsModel, RerankModel) and
// those of Config.Models; any other is -32602 with data {"field":
// "/params/model", "reason" (listing the allowed models),
// "allowedModels": [names]}, and nothing is sent upstream. models: ["*"]
// (AnyModel) is the explicit opt-in to any model of the endpoint.
// Config.MaxTokens is ai/chat's cap: a call asking for more tokens, or
// for no bound, is sent with max_tokens = Config.MaxTokens (lowered, not
// refused; finish_reason "length" tells the caller the answer was cut).
// Without max_tokens there is no cap of ours. Behind a hosted API, also
// give the agent authentication, or turn the methods off (ai_methods:
// false).
//
// ai/chat: a chat completion (POST {base_url}/chat/completions). Params
// {"messages": [{"role": "system"|"developer"|"user"|"assistant",
// "content": string}, …] (required, not empty), "model"?: string (default
// Config.Model; an allowed model, see above), "temperature"?: number in
// [0, 2] (default Config.Temperature), "max_tokens"?: integer > 0
// (default and cap Config.MaxTokens), "stream"?: bool}. Config.System is
// not added. Result {"model": string, "message": {"role": "assistant",
// "content": string, "refusal"?: string},
// "finish_reason": "stop"|"length"|"content_filter"|…, "usage"?:
// {"prompt_tokens", "completion_tokens", "total_tokens"}}. With "stream":
// true the answer is a Server-Sent Events stream, each event a JSON-RPC
// response with the request's id whose result is {"delta": string,
// "refusal"?: string} as tokens arrive, the last one {"delta": "",
// "finish_reason": string, "model": string, "usage"?: {…}}; a failure
// midway is the stream's last event, an error response.
//
//	→ {"jsonrpc":"2.0","id":1,"method":"ai/chat","params":{"messages":[{"role":"user","content":"Hi"}]}}
//	← {"jsonrpc":"2.0","id":1,"result":{"model":"llama3.2","message":{"role":"assistant","content":"Hello!"},
//	   "finish_reason":"stop","usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}}
//
// ai/embeddings: embedding vectors (POST {base_url}/embeddings). Params
// {"input": string | [string, …] (required; each text not empty),
// "model"?: string (default Config.EmbeddingsModel, else Model; an
// allowed model), "dimensions"?: integer > 0}. Result {"model": string, "data":
// [{"index": integer, "embedding": [number, …]}, …] (one per input, in
// input order), "usage"?: {"prompt_tokens", "total_tokens"}}.
//
// ai/rerank: the relevance of documents to a query (POST
// {base_url}/rerank, the Jina/Cohere shape; see HTTPProvider). Params
// {"query": string (required, not empty), "documents": [string, …]
// (required, not empty), "top_n"?: integer >= 1, "model"?: string
// (default Config.RerankModel, else Model; an allowed model),
// "return_documents"?: bool}.
// Result {"model": string, "results": [{"index": integer,
// "relevance_score": number, "document"?: string (with
// return_documents)}, …] (most relevant first, at most top_n), "usage"?:
// {"total_tokens"}}.
//
// Errors (JSON-RPC error objects; data as shown): -32602 invalid params,
// data {"field": JSON Pointer such as "/params/messages/0/role",
// "reason"} naming the member (a model that is not allowed adds
// "allowedModels"), or {"upstreamStatus"} when the upstream rejected the
// request (HTTP 400, 422); -32050 CodeUpstreamTimeout, no (complete)
// answer within Config.Timeout; -32051 CodeModelNotFound,
// data {"model"}; -32052 CodeRateLimited, data {"retryAfterSeconds"}
// when the upstream sent Retry-After; -32053 CodeUpstreamUnauthorized,
// the upstream rejected the configured API key (401) or access to the
// model (403); -32054 CodeUpstream, any other upstream failure, data
// {"upstreamStatus"} when it answered an HTTP error. Messages say what
// went wrong and never contain the API key.
package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/egress"
	"github.com/a2abridge/a2abridge/internal/telemetry"
	"github.com/a2abridge/a2abridge/internal/urlguard"
	"github.com/a2abridge/a2abridge/server"
)

// Names the agent uses in what clients see.
const (
	// ArtifactName is the name of the artifact holding an answer.
	ArtifactName = "response"
	// MetadataUsage is the task metadata key of the token usage: an
	// object {"prompt_tokens", "completion_tokens", "total_tokens"} of
	// integers (with MultiTurn, summed over the task's turns).
	MetadataUsage = "a2abridge/usage"
	// MetadataModel is the task metadata key of the model name the
	// endpoint reported for the last answer (Config.Model when it
	// reported none).
	MetadataModel = "a2abridge/model"
	// MetadataFinishReason is the task metadata key of the last answer's
	// finish_reason ("stop", "length", "content_filter", ...).
	MetadataFinishReason = "a2abridge/finish_reason"
)

// Agent is a server.Agent answering with an OpenAI-compatible chat
// completions endpoint. It is safe for concurrent use; build it with New.
type Agent struct {
	cfg        Config
	base       string // BaseURL without its password, for messages
	history    int
	maxHistory int // bytes of history text
	timeout    time.Duration
	maxOutput  int64 // Config.MaxOutput, its default applied
	retries    int
	hc         *http.Client
	tr         *http.Transport
	complete   oai.ChatCompletionService
	provider   *HTTPProvider // of the ai/* methods
}

// New validates c (see Config.Validate) and returns an Agent with its own
// pooled HTTP connections to c.BaseURL. It does no network I/O.
func New(c Config) (*Agent, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(c.BaseURL)
	a := &Agent{cfg: c, base: redactURL(u), history: DefaultHistory, maxHistory: DefaultMaxHistoryBytes,
		timeout: DefaultTimeout, retries: DefaultMaxRetries}
	if c.History != nil {
		a.history = *c.History
	}
	if c.MaxHistoryBytes != nil {
		a.maxHistory = *c.MaxHistoryBytes
	}
	if c.Timeout > 0 {
		a.timeout = c.Timeout
	}
	if c.MaxRetries != nil {
		a.retries = *c.MaxRetries
	}
	policy, err := egress.New(c.BaseURL, c.AllowHosts, "allow_hosts")
	if err != nil {
		return nil, err
	}
	tr := pooledTransport()
	tr.DialContext = policy.Dialer().DialContext
	a.tr = tr
	check := policy.After(c.CheckURL)
	a.hc = &http.Client{Transport: telemetry.Transport(urlguard.Transport(tr, check), "openai")}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(c.BaseURL, "/") + "/"),
		option.WithHTTPClient(a.hc),
		option.WithMaxRetries(a.retries),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	// The service alone, not oai.NewClient: a client would also read
	// OPENAI_API_KEY, OPENAI_BASE_URL and friends from the environment
	// and send them to whatever base_url says.
	a.complete = oai.NewChatCompletionService(opts...)
	a.maxOutput = c.MaxOutput
	if a.maxOutput == 0 {
		a.maxOutput = DefaultMaxOutput
	}
	p, err := NewHTTPProvider(HTTPOptions{BaseURL: c.BaseURL, APIKey: c.APIKey, MaxRetries: &a.retries, HTTPClient: a.hc, MaxAnswerBytes: c.MaxAnswerBytes})
	if err != nil {
		return nil, err
	}
	a.provider = p
	return a, nil
}

// methodOptions are the options of the agent's ai/* methods: its models,
// temperature, max_tokens and timeout.
func (a *Agent) methodOptions() MethodOptions {
	o := MethodOptions{ChatModel: a.cfg.Model, EmbeddingsModel: a.cfg.EmbeddingsModel, RerankModel: a.cfg.RerankModel,
		Models: a.cfg.Models, Temperature: a.cfg.Temperature, MaxTokens: a.cfg.MaxTokens, Timeout: a.timeout}
	if o.EmbeddingsModel == "" {
		o.EmbeddingsModel = a.cfg.Model
	}
	if o.RerankModel == "" {
		o.RerankModel = a.cfg.Model
	}
	return o
}

// Methods returns the JSON-RPC methods ai/chat, ai/embeddings and
// ai/rerank on the agent's endpoint (Config.BaseURL, APIKey, MaxRetries,
// Timeout; Model, EmbeddingsModel and RerankModel as the default models,
// allowed with those of Models; Temperature as ai/chat's default,
// MaxTokens as its default and cap; the system prompt is not added:
// callers send their own messages), for server.HandlerOptions.Methods;
// nil when Config.AIMethods is false. See the package doc for their params,
// results and errors, and Methods to answer them with another Provider.
func (a *Agent) Methods() map[string]server.Method {
	if a.cfg.AIMethods != nil && !*a.cfg.AIMethods {
		return nil
	}
	return Methods(a.provider, a.methodOptions())
}

// CardExtension returns the Agent Card extension that declares the
// agent's ai/* methods (see Extension), for the card's
// capabilities.extensions when Methods is served.
func (a *Agent) CardExtension() a2a.AgentExtension { return Extension(a.methodOptions()) }

// Close releases the agent's idle connections. An agent may still be
// used after Close (it dials again).
func (a *Agent) Close() error {
	a.tr.CloseIdleConnections()
	return nil
}

// Skill returns a default skill for the agent's card: a chat with the
// configured model.
func (a *Agent) Skill() a2a.AgentSkill {
	desc := fmt.Sprintf("Answers each message with the model %s; reuse the contextId to continue a conversation.", a.cfg.Model)
	if a.cfg.MultiTurn {
		desc = fmt.Sprintf("A conversation with the model %s: each answer waits for your next message on the same task; cancel the task to end it.", a.cfg.Model)
	}
	return a2a.AgentSkill{
		ID: "chat", Name: "Chat with " + a.cfg.Model, Description: desc,
		Tags: []string{"chat", "llm", "openai"},
		// Any part: data is shown to the model as JSON, a file by its
		// name, media type and size or URL.
		InputModes:  []string{"text/plain", "application/json", "*/*"},
		OutputModes: []string{"text/plain"},
	}
}

// Inline implements server.InlineAgent: Execute returns once the task is
// completed, failed or input-required.
func (a *Agent) Inline() bool { return true }

// Execute implements server.Agent: it sends the conversation to the
// endpoint and streams the answer into the task (see the package doc).
func (a *Agent) Execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	err := a.execute(ctx, req, t)
	if errors.Is(err, server.ErrTaskClosed) {
		return nil // canceled meanwhile: nothing more to say
	}
	return err
}

func (a *Agent) execute(ctx context.Context, req *server.Request, t *server.TaskUpdater) error {
	var past []source
	switch {
	case a.history == 0:
	case a.cfg.MultiTurn:
		past = taskSources(req.Task, true)
	default:
		tasks, err := t.ContextHistory(ctx, a.history)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return t.Fail(ctx, "could not read the conversation history of this contextId")
		}
		for _, tk := range tasks {
			past = append(past, taskSources(tk, false)...)
		}
	}
	msgs := a.messages(buildHistory(past, a.history, a.maxHistory), messageText(req.Message))

	if req.Task.Status.State == a2a.TaskStateSubmitted {
		if err := t.Working(ctx, ""); err != nil {
			return err
		}
	}

	params := oai.ChatCompletionNewParams{
		Model:         a.cfg.Model,
		Messages:      msgs,
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if a.cfg.Temperature != nil {
		params.Temperature = oai.Float(*a.cfg.Temperature)
	}
	if a.cfg.MaxTokens != nil {
		params.MaxTokens = oai.Int(int64(*a.cfg.MaxTokens))
	}

	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	cctx, call := telemetry.StartModelCall(cctx, a.cfg.Model)
	defer call.End(nil) // ended below with the outcome; this only guards a panic
	// One event of the stream may not hold more than the answer may: the
	// client's decoder would gather it whole.
	up := upstream{maxEvent: a.maxOutput + 1<<20}
	stream := a.complete.NewStreaming(cctx, params, option.WithMiddleware(up.observe))
	defer stream.Close()

	out := answer{t: t, id: a2a.NewID()}
	var (
		model, finish, refusal string
		usage                  *tokenUsage
	)
	var got int64 // bytes of answer and refusal, against max_output
	overflow := false
	for !overflow && stream.Next() {
		ch := stream.Current()
		if ch.Model != "" {
			model = ch.Model
		}
		if ch.JSON.Usage.Valid() {
			usage = &tokenUsage{ch.Usage.PromptTokens, ch.Usage.CompletionTokens, ch.Usage.TotalTokens}
		}
		for _, c := range ch.Choices {
			if c.Index != 0 || finish != "" {
				continue // n is 1; nothing counts after the finish
			}
			if got += int64(len(c.Delta.Content) + len(c.Delta.Refusal)); got > a.maxOutput {
				overflow = true
				cancel() // abort the upstream request
				break
			}
			refusal += c.Delta.Refusal
			if c.Delta.Content != "" {
				call.FirstToken()
				if err := out.add(ctx, c.Delta.Content); err != nil {
					call.End(err)
					return err
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
				if refusal == "" && finish != "content_filter" {
					if err := out.end(ctx); err != nil {
						call.End(err)
						return err
					}
				}
			}
		}
	}
	err := stream.Err()
	if overflow {
		err = nil
	}
	if ctx.Err() != nil {
		call.End(ctx.Err())
		return ctx.Err() // canceled or shutting down: the request is aborted
	}
	if err == nil && finish == "" && cctx.Err() != nil {
		err = cctx.Err() // the deadline cut the stream short
	}
	call.End(err)

	// What the endpoint reported goes into metadata: as valid UTF-8 (a
	// string that is not cannot be written as JSON, and the task's event
	// would be refused).
	model, finish, refusal = strings.ToValidUTF8(model, "\uFFFD"), strings.ToValidUTF8(finish, "\uFFFD"), strings.ToValidUTF8(refusal, "\uFFFD")
	md := map[string]any{MetadataModel: model}
	if model == "" {
		md[MetadataModel] = a.cfg.Model
	}
	if finish != "" {
		md[MetadataFinishReason] = finish
	}
	if usage != nil {
		if a.cfg.MultiTurn {
			usage.add(previousUsage(req.Task.Metadata))
		}
		md[MetadataUsage] = usage.object()
	}

	var reason string
	switch {
	case overflow, up.overLimit:
		reason = fmt.Sprintf("the model's answer passed max_output (%d bytes); the request was aborted", a.maxOutput)
	case refusal != "":
		reason = "the model refused: " + clean(refusal, 2000)
	case finish == "content_filter":
		reason = "the model's answer was stopped by the endpoint's content filter"
	case finish != "":
		// The answer is complete; a failure after it (before [DONE])
		// costs at most the usage.
	case err != nil:
		reason = a.describe(err, cctx, &up)
	default:
		reason = "the endpoint's stream ended before the answer was finished (no finish_reason)"
	}
	if reason != "" {
		if err := out.flush(ctx); err != nil {
			return err
		}
		return finishTask(ctx, t, a2a.TaskStateFailed, a.redact(reason), md)
	}
	if a.cfg.MultiTurn {
		text := out.text.String()
		if text == "" {
			text = "(empty answer)"
		}
		return finishTask(ctx, t, a2a.TaskStateInputRequired, text, md)
	}
	return finishTask(ctx, t, a2a.TaskStateCompleted, "", md)
}

// finishTask sets the task's final state with an optional message and the
// metadata to merge into the task's.
func finishTask(ctx context.Context, t *server.TaskUpdater, state a2a.TaskState, text string, md map[string]any) error {
	var msg *a2a.Message
	if text != "" {
		msg = t.TextMessage(text)
	}
	return t.Emit(ctx, &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: state, Message: msg}, Metadata: md})
}

// answer streams one answer into an artifact, one chunk per delta. The
// latest delta is held back until the next one (or the end) arrives, so
// that the last chunk can carry lastChunk=true.
type answer struct {
	t       *server.TaskUpdater
	id      string
	started bool   // a chunk was emitted
	pending string // held back
	held    bool
	ended   bool
	text    strings.Builder
}

func (o *answer) add(ctx context.Context, delta string) error {
	if o.ended {
		return nil
	}
	o.text.WriteString(delta)
	if o.held {
		if err := o.emit(ctx, o.pending, false); err != nil {
			return err
		}
	}
	o.pending, o.held = delta, true
	return nil
}

// end emits the held-back delta (or an empty text when the answer was
// empty) as the artifact's last chunk.
func (o *answer) end(ctx context.Context) error {
	if o.ended {
		return nil
	}
	o.ended = true
	o.held = false
	return o.emit(ctx, o.pending, true)
}

// flush emits the held-back delta without ending the artifact (before a
// failure: what was generated stays visible).
func (o *answer) flush(ctx context.Context) error {
	if o.ended || !o.held {
		return nil
	}
	o.held = false
	return o.emit(ctx, o.pending, false)
}

func (o *answer) emit(ctx context.Context, text string, last bool) error {
	art := a2a.Artifact{ArtifactID: o.id, Name: ArtifactName, Parts: []a2a.Part{a2a.NewTextPart(text)}}
	appendParts := o.started
	o.started = true
	return o.t.AddArtifact(ctx, art, appendParts, last)
}

// messages returns the request's messages: system, history, the new one.
func (a *Agent) messages(past []turn, text string) []oai.ChatCompletionMessageParamUnion {
	msgs := make([]oai.ChatCompletionMessageParamUnion, 0, len(past)+2)
	if a.cfg.System != "" {
		msgs = append(msgs, oai.SystemMessage(a.cfg.System))
	}
	for _, p := range past {
		if p.assistant {
			msgs = append(msgs, oai.AssistantMessage(p.text))
		} else {
			msgs = append(msgs, oai.UserMessage(p.text))
		}
	}
	return append(msgs, oai.UserMessage(text))
}

// upstream is what the middleware saw of the last HTTP attempt.
type upstream struct {
	attempts   int
	status     int
	retryAfter string
	body       []byte // of an error answer, at most 64 KiB
	limit      int64  // > 0: a successful answer's body is read up to this many bytes
	maxEvent   int64  // > 0: an SSE answer may go this many bytes without an event's end (a blank line)
	overLimit  bool   // the body passed limit or maxEvent
}

// errAnswerTooLarge is the read error of a body past upstream.limit.
var errAnswerTooLarge = errors.New("the answer is over its size limit")

// limitedBody reads an answer's body up to u.limit bytes (no bound when
// 0), and an event stream's events up to u.maxEvent bytes each (no bound
// when 0); past either it fails with errAnswerTooLarge and marks u.
type limitedBody struct {
	io.ReadCloser
	u        *upstream
	left     int64 // bytes left under u.limit
	inEvent  int64 // bytes since the last event's end
	lastLF   bool  // the last byte read ended a line (a '\r' aside)
	probeErr error // what the read past the limit returned
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.probeErr != nil {
		return 0, b.probeErr
	}
	if b.u.limit > 0 {
		if b.left <= 0 {
			// Exactly at the limit: the body is over it only if more follows.
			var one [1]byte
			m, err := b.ReadCloser.Read(one[:])
			if m > 0 {
				b.u.overLimit = true
				return 0, errAnswerTooLarge
			}
			if err != nil {
				b.probeErr = err // io.EOF: the body was exactly the limit
			}
			return 0, err
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.u.maxEvent > 0 {
		for _, c := range p[:n] {
			switch {
			case c == '\n' && b.lastLF:
				b.inEvent = 0 // a blank line: the event ended
			case c == '\n':
				b.lastLF = true
			case c != '\r':
				b.lastLF = false
				if b.inEvent++; b.inEvent > b.u.maxEvent {
					b.u.overLimit = true
					return 0, errAnswerTooLarge
				}
			}
		}
	}
	return n, err
}

func (u *upstream) observe(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	u.attempts++
	u.status, u.retryAfter, u.body = 0, "", nil
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	u.status = res.StatusCode
	if res.StatusCode >= 400 {
		u.retryAfter = res.Header.Get("Retry-After")
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		u.body = b
		res.Body = io.NopCloser(bytes.NewReader(b))
		return res, nil
	}
	if u.limit > 0 || u.maxEvent > 0 {
		res.Body = &limitedBody{ReadCloser: res.Body, u: u, left: u.limit}
	}
	return res, nil
}

// describe turns a failed completion into a reason for the client.
func (a *Agent) describe(err error, cctx context.Context, up *upstream) string {
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		if up.status == http.StatusTooManyRequests && up.retryAfter != "" {
			return fmt.Sprintf("rate limited by the endpoint (HTTP 429): it asked to retry after %s, beyond the timeout of %s",
				clean(up.retryAfter, 40), a.timeout)
		}
		return fmt.Sprintf("no complete answer from the model within %s (timeout)", a.timeout)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		msg := errorMessage(se.Event.Data)
		if msg == "" {
			msg = "no details"
		}
		return "the endpoint reported an error during the answer: " + msg
	}
	if up.status >= 400 {
		msg := errorMessage(up.body)
		detail := ""
		if msg != "" {
			detail = ": " + msg
		}
		tries := ""
		if up.attempts > 1 {
			tries = fmt.Sprintf(" after %d attempts", up.attempts)
		}
		switch s := up.status; {
		case s == http.StatusUnauthorized:
			if a.cfg.APIKey == "" {
				return "the endpoint requires an API key (HTTP 401); none is configured (api_key)"
			}
			return "the endpoint rejected the API key (HTTP 401)"
		case s == http.StatusForbidden:
			return fmt.Sprintf("the endpoint denied access to model %q (HTTP 403)%s", a.cfg.Model, detail)
		case s == http.StatusNotFound:
			if modelNotFound(up.body) {
				return fmt.Sprintf("model %q not found at %s (HTTP 404)%s", a.cfg.Model, a.base, detail)
			}
			return fmt.Sprintf("%schat/completions not found (HTTP 404); check base_url (it usually ends in /v1)%s",
				strings.TrimRight(a.base, "/")+"/", detail)
		case s == http.StatusTooManyRequests:
			ra := ""
			if up.retryAfter != "" {
				ra = ", retry after " + clean(up.retryAfter, 40)
				if _, err := strconv.Atoi(up.retryAfter); err == nil {
					ra += " s"
				}
			}
			return fmt.Sprintf("rate limited by the endpoint (HTTP 429)%s%s%s", tries, ra, detail)
		case s >= 500:
			return fmt.Sprintf("the endpoint failed (HTTP %d %s)%s%s", s, http.StatusText(s), tries, detail)
		default:
			return fmt.Sprintf("the endpoint rejected the request (HTTP %d %s)%s", s, http.StatusText(s), detail)
		}
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("cannot connect to %s (connection refused)", a.base)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the connection to %s was closed before the answer was finished", a.base)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("cannot resolve the host of %s (%s)", a.base, clean(dns.Err, 200))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Sprintf("request to %s failed: %s", a.base, clean(ue.Err.Error(), 300))
	}
	if up.status == http.StatusOK {
		return "the endpoint sent an answer that is not a valid chat completion stream: " + clean(err.Error(), 300)
	}
	return "request to the endpoint failed: " + clean(err.Error(), 300)
}

// modelNotFound reports whether a 404 body is about the model (OpenAI's
// code model_not_found, or a message naming the model) rather than the
// URL.
func modelNotFound(body []byte) bool {
	if bytes.Contains(body, []byte("model_not_found")) {
		return true
	}
	return strings.Contains(strings.ToLower(errorMessage(body)), "model")
}

// redact removes the API key from a text shown to clients.
func (a *Agent) redact(s string) string {
	if a.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, a.cfg.APIKey, "[redacted]")
}
