package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/jsonpointer"
	"github.com/a2abridge/a2abridge/server"
)

// The JSON-RPC methods of the local AI operations (see the package doc).
const (
	MethodChat       = "ai/chat"
	MethodEmbeddings = "ai/embeddings"
	MethodRerank     = "ai/rerank"
)

// ExtensionURI identifies the local AI operations in an Agent Card's
// capabilities.extensions (A2A 1.0 §4.6): see Extension.
const ExtensionURI = "https://a2abridge.dev/extensions/ai/v1"

// Error codes of the ai/* methods, in JSON-RPC's range for
// implementation-defined server errors (JSON-RPC 2.0 §5.1; A2A 0.3.0
// §8.2 lets servers define more there). Invalid params are -32602 (data
// {"field": JSON Pointer, "reason"}), also when the upstream rejected the
// request as invalid (HTTP 400 or 422; data {"upstreamStatus"}).
const (
	// CodeUpstreamTimeout: no (complete) answer from the upstream within
	// the timeout.
	CodeUpstreamTimeout = -32050
	// CodeModelNotFound: the upstream does not know the model; data
	// {"model"}.
	CodeModelNotFound = -32051
	// CodeRateLimited: the upstream rate-limits (HTTP 429) after the
	// retries; data {"retryAfterSeconds"} when it said when to retry.
	CodeRateLimited = -32052
	// CodeUpstreamUnauthorized: the upstream rejected our credentials
	// (HTTP 401) or denied access to the model (403): the gateway's
	// configuration, not the caller's, is at fault.
	CodeUpstreamUnauthorized = -32053
	// CodeUpstream: any other upstream failure: an error status (data
	// {"upstreamStatus"}), an unreachable endpoint, an answer that is not
	// what the API defines, a stream that broke off.
	CodeUpstream = -32054
)

// The errors of the codes above, for a Provider to specialise with
// WithMessage and WithData. errors.Is matches them by code.
var (
	ErrUpstreamTimeout      = &a2a.Error{Code: CodeUpstreamTimeout, Message: "Upstream timeout"}
	ErrModelNotFound        = &a2a.Error{Code: CodeModelNotFound, Message: "Model not found"}
	ErrRateLimited          = &a2a.Error{Code: CodeRateLimited, Message: "Rate limited by the upstream"}
	ErrUpstreamUnauthorized = &a2a.Error{Code: CodeUpstreamUnauthorized, Message: "The upstream rejected the gateway's credentials"}
	ErrUpstream             = &a2a.Error{Code: CodeUpstream, Message: "Upstream error"}
)

// MethodOptions configure Methods. The zero value allows no model: set
// the default models, Models, or both.
type MethodOptions struct {
	// ChatModel, EmbeddingsModel and RerankModel are the models used
	// when a call of ai/chat, ai/embeddings or ai/rerank names none; ""
	// makes "model" required in that method's params. A call may name
	// any of the three.
	ChatModel, EmbeddingsModel, RerankModel string
	// Models are the models a call may name besides the three defaults;
	// empty: only the defaults. A call naming another model is -32602
	// (data {"field": "/params/model", "reason", "allowedModels"}) and
	// never reaches the Provider. An element "*" (AnyModel) allows any
	// model: with a hosted API's key, every caller then spends it on the
	// model of its choice.
	Models []string
	// Temperature is ai/chat's temperature for calls that set none; nil:
	// the upstream's.
	Temperature *float64
	// MaxTokens, when set, is ai/chat's max_tokens for calls that set
	// none and the cap of those that do: a larger max_tokens is lowered
	// to it (not refused); nil: no cap (the upstream's own applies).
	MaxTokens *int
	// Timeout bounds each call, a whole stream included; 0 means
	// DefaultTimeout (120 s).
	Timeout time.Duration
}

// allowedModels returns the models a call may name: the defaults, then
// Models, each once; anyModel when Models holds AnyModel.
func (o MethodOptions) allowedModels() (names []string, anyModel bool) {
	for _, m := range append([]string{o.ChatModel, o.EmbeddingsModel, o.RerankModel}, o.Models...) {
		switch {
		case m == AnyModel:
			anyModel = true
		case m != "" && !slices.Contains(names, m):
			names = append(names, m)
		}
	}
	return names, anyModel
}

// Methods returns the JSON-RPC methods ai/chat, ai/embeddings and
// ai/rerank (see the package doc for their params, results and errors)
// answered by p, for server.HandlerOptions.Methods:
//
//	server.NewHandler(eng, "llm", agent, card, server.HandlerOptions{
//		Methods: openai.Methods(provider, openai.MethodOptions{ChatModel: "llama3.2"}),
//	})
//
// Declare them in the agent's card with Extension(o).
func Methods(p Provider, o MethodOptions) map[string]server.Method {
	m := &methods{p: p, o: o, timeout: o.Timeout}
	if m.timeout <= 0 {
		m.timeout = DefaultTimeout
	}
	return map[string]server.Method{
		MethodChat:       m.chat,
		MethodEmbeddings: m.embeddings,
		MethodRerank:     m.rerank,
	}
}

// Extension returns the Agent Card extension (A2A 1.0 §4.6.1, A2A 0.3.0
// §5.5.2.1) that declares the methods of Methods(p, o): URI ExtensionURI,
// not required, params {"methods": [names], "errorCodes": {code: meaning},
// "defaultModels": {"chat"?, "embeddings"?, "rerank"?}, "models": [names]
// (the models a call may name; ["*"] when any), "maxTokens"?: integer
// (ai/chat's cap)}.
func Extension(o MethodOptions) a2a.AgentExtension {
	params := map[string]any{
		"methods": []any{MethodChat, MethodEmbeddings, MethodRerank},
		"errorCodes": map[string]any{
			strconv.Itoa(CodeUpstreamTimeout):      "upstream timeout",
			strconv.Itoa(CodeModelNotFound):        "model not found",
			strconv.Itoa(CodeRateLimited):          "rate limited (data.retryAfterSeconds)",
			strconv.Itoa(CodeUpstreamUnauthorized): "upstream rejected the gateway's credentials",
			strconv.Itoa(CodeUpstream):             "upstream error",
		},
	}
	defaults := map[string]any{}
	for k, v := range map[string]string{"chat": o.ChatModel, "embeddings": o.EmbeddingsModel, "rerank": o.RerankModel} {
		if v != "" {
			defaults[k] = v
		}
	}
	params["defaultModels"] = defaults
	names, anyModel := o.allowedModels()
	models := []any{}
	if anyModel {
		models = append(models, AnyModel)
	} else {
		for _, s := range names {
			models = append(models, s)
		}
	}
	params["models"] = models
	if o.MaxTokens != nil {
		params["maxTokens"] = *o.MaxTokens
	}
	return a2a.AgentExtension{
		URI: ExtensionURI,
		Description: "Local AI operations as JSON-RPC methods on this agent's JSON-RPC endpoint: " +
			"ai/chat (chat completion, streamed over SSE with stream: true), ai/embeddings (embedding vectors), " +
			"ai/rerank (relevance of documents to a query). Errors -32050..-32054 are upstream conditions (see errorCodes).",
		Params: params,
	}
}

type methods struct {
	p       Provider
	o       MethodOptions
	timeout time.Duration
}

// model returns the model a call uses: the one it names, else def; a
// model that MethodOptions does not allow is -32602.
func (m *methods) model(named, def string) (string, error) {
	if named == "" {
		if def == "" {
			return "", a2a.InvalidParams("/params/model", "model: required (no default model is configured)")
		}
		return def, nil
	}
	names, anyModel := m.o.allowedModels()
	if anyModel || slices.Contains(names, named) {
		return named, nil
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	e := a2a.InvalidParams("/params/model", fmt.Sprintf("model: %q is not allowed here (allowed: %s)", clean(named, 100), list))
	allowed := make([]any, len(names))
	for i, s := range names {
		allowed[i] = s
	}
	e.Data.(map[string]any)["allowedModels"] = allowed
	return "", e
}

// fail is the error to answer for a Provider's err: ctx's (the caller's)
// end as it is; a deadline of cctx (the timeout) as CodeUpstreamTimeout;
// an *a2a.Error as it is.
func (m *methods) fail(ctx, cctx context.Context, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded)
	if ae, ok := err.(*a2a.Error); ok {
		if timedOut && ae.Code == CodeUpstreamTimeout {
			return ae.WithMessage("%s (timeout %s)", ae.Message, m.timeout)
		}
		return ae
	}
	if timedOut {
		return ErrUpstreamTimeout.WithMessage("no answer from the upstream within %s (timeout)", m.timeout)
	}
	return err
}

// Params and results of the methods, as JSON.
type (
	chatParams struct {
		Messages    []chatMessageParams `json:"messages"`
		Model       string              `json:"model"`
		Temperature *float64            `json:"temperature"`
		MaxTokens   *int64              `json:"max_tokens"`
		Stream      bool                `json:"stream"`
	}
	chatMessageParams struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	embeddingsParams struct {
		Input      jsontext.Value `json:"input"`
		Model      string         `json:"model"`
		Dimensions *int64         `json:"dimensions"`
	}
	rerankParams struct {
		Query           string   `json:"query"`
		Documents       []string `json:"documents"`
		TopN            *int64   `json:"top_n"`
		Model           string   `json:"model"`
		ReturnDocuments bool     `json:"return_documents"`
	}

	usageJSON struct {
		PromptTokens     *int64 `json:"prompt_tokens,omitempty"`
		CompletionTokens *int64 `json:"completion_tokens,omitempty"`
		TotalTokens      int64  `json:"total_tokens"`
	}
	chatMessageJSON struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Refusal string `json:"refusal,omitempty"`
	}
	chatResult struct {
		Model        string          `json:"model"`
		Message      chatMessageJSON `json:"message"`
		FinishReason string          `json:"finish_reason"`
		Usage        *usageJSON      `json:"usage,omitempty"`
	}
	chatEvent struct {
		Delta        string     `json:"delta"`
		Refusal      string     `json:"refusal,omitempty"`
		FinishReason string     `json:"finish_reason,omitempty"`
		Model        string     `json:"model,omitempty"`
		Usage        *usageJSON `json:"usage,omitempty"`
	}
	embeddingJSON struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	embeddingsResult struct {
		Model string          `json:"model"`
		Data  []embeddingJSON `json:"data"`
		Usage *usageJSON      `json:"usage,omitempty"`
	}
	rerankResultJSON struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
		Document       *string `json:"document,omitempty"`
	}
	rerankResult struct {
		Model   string             `json:"model"`
		Results []rerankResultJSON `json:"results"`
		Usage   *usageJSON         `json:"usage,omitempty"`
	}
)

// chatUsage is u as ai/chat shows it (all three counts).
func chatUsage(u *Usage) *usageJSON {
	if u == nil {
		return nil
	}
	return &usageJSON{PromptTokens: &u.PromptTokens, CompletionTokens: &u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// decodeParams decodes params (a JSON object) into v strictly: members
// are case-sensitive, unknown or repeated ones are refused. Errors are
// -32602 naming the member.
func decodeParams(params []byte, v any, required string) error {
	if len(params) == 0 || string(params) == "null" {
		return a2a.InvalidParams("/params", "params: required, an object with "+required)
	}
	err := jsonv2.Unmarshal(params, v, jsonv2.RejectUnknownMembers(true))
	if err == nil {
		return nil
	}
	var se *jsonv2.SemanticError
	var sy *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		ptr := string(se.JSONPointer)
		if errors.Is(se.Err, jsonv2.ErrUnknownName) {
			return a2a.InvalidParams("/params"+ptr, memberPath(ptr)+": unknown member (known: "+knownMembers(v, ptr)+")")
		}
		return a2a.InvalidParams("/params"+ptr, memberPath(ptr)+": must be "+typeName(se.GoType))
	case errors.As(err, &sy):
		ptr := string(sy.JSONPointer)
		if errors.Is(sy.Err, jsontext.ErrDuplicateName) {
			return a2a.InvalidParams("/params"+ptr, memberPath(ptr)+": repeated member")
		}
		return a2a.InvalidParams("/params"+ptr, memberPath(ptr)+": not valid JSON")
	}
	return a2a.InvalidParams("/params", "params: not valid")
}

// memberPath turns a JSON Pointer into the member's name as the methods'
// documentation writes it: "/messages/0/role" is messages[0].role; ""
// is params.
func memberPath(ptr string) string {
	if ptr == "" {
		return "params"
	}
	return jsonpointer.Dotted(ptr, func(tok string) string { return clean(tok, 60) })
}

// knownMembers lists the members of the object that ptr (an unknown
// member's pointer) is in: v's, or a message's.
func knownMembers(v any, ptr string) string {
	t := reflect.TypeOf(v).Elem()
	if strings.Count(ptr, "/") > 1 {
		t = reflect.TypeFor[chatMessageParams]()
	}
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		names = append(names, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return strings.Join(names, ", ")
}

// typeName says what a value of Go type t is in JSON.
func typeName(t reflect.Type) string {
	if t == nil {
		return "valid"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[[]chatMessageParams]():
		return "an array of messages {role, content}"
	case reflect.TypeFor[[]string]():
		return "an array of strings"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return "valid"
}

// chatRoles are the roles a message of ai/chat may have.
var chatRoles = []string{"system", "developer", "user", "assistant"}

// decodeChat decodes and checks the params of ai/chat; the model is the
// one named ("" when none).
func decodeChat(params []byte) (ChatRequest, bool, error) {
	var p chatParams
	if err := decodeParams(params, &p, "messages"); err != nil {
		return ChatRequest{}, false, err
	}
	if len(p.Messages) == 0 {
		return ChatRequest{}, false, a2a.InvalidParams("/params/messages", "messages: required, at least one {role, content}")
	}
	req := ChatRequest{Model: p.Model, Messages: make([]ChatMessage, len(p.Messages)), Temperature: p.Temperature}
	for i, m := range p.Messages {
		if !slices.Contains(chatRoles, m.Role) {
			return ChatRequest{}, false, a2a.InvalidParams(fmt.Sprintf("/params/messages/%d/role", i),
				fmt.Sprintf("messages[%d].role: must be one of %s, got %q", i, strings.Join(chatRoles, ", "), clean(m.Role, 40)))
		}
		req.Messages[i] = ChatMessage{Role: m.Role, Content: m.Content}
	}
	if t := p.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return ChatRequest{}, false, a2a.InvalidParams("/params/temperature", fmt.Sprintf("temperature: must be between 0 and 2, got %v", *t))
	}
	if n := p.MaxTokens; n != nil {
		if *n <= 0 || *n > 1<<31-1 {
			return ChatRequest{}, false, a2a.InvalidParams("/params/max_tokens", fmt.Sprintf("max_tokens: must be between 1 and %d, got %d", 1<<31-1, *n))
		}
		v := int(*n)
		req.MaxTokens = &v
	}
	return req, p.Stream, nil
}

// decodeEmbeddings decodes and checks the params of ai/embeddings.
func decodeEmbeddings(params []byte) (EmbeddingsRequest, error) {
	var p embeddingsParams
	if err := decodeParams(params, &p, "input"); err != nil {
		return EmbeddingsRequest{}, err
	}
	req := EmbeddingsRequest{Model: p.Model}
	switch p.Input.Kind() {
	case 0, 'n':
		return EmbeddingsRequest{}, a2a.InvalidParams("/params/input", "input: required, a string or an array of strings")
	case '"':
		var s string
		if err := jsonv2.Unmarshal(p.Input, &s); err != nil {
			return EmbeddingsRequest{}, a2a.InvalidParams("/params/input", "input: not a valid string")
		}
		req.Input = []string{s}
	case '[':
		if err := jsonv2.Unmarshal(p.Input, &req.Input); err != nil || len(req.Input) == 0 {
			return EmbeddingsRequest{}, a2a.InvalidParams("/params/input", "input: must be a string or a non-empty array of strings")
		}
	default:
		return EmbeddingsRequest{}, a2a.InvalidParams("/params/input", "input: must be a string or an array of strings")
	}
	for i, s := range req.Input {
		if s == "" {
			field, name := "/params/input", "input"
			if p.Input.Kind() == '[' {
				field, name = fmt.Sprintf("/params/input/%d", i), fmt.Sprintf("input[%d]", i)
			}
			return EmbeddingsRequest{}, a2a.InvalidParams(field, name+": empty (the text to embed)")
		}
	}
	if d := p.Dimensions; d != nil {
		if *d <= 0 || *d > 1<<16 {
			return EmbeddingsRequest{}, a2a.InvalidParams("/params/dimensions", fmt.Sprintf("dimensions: must be between 1 and %d, got %d", 1<<16, *d))
		}
		req.Dimensions = int(*d)
	}
	return req, nil
}

// decodeRerank decodes and checks the params of ai/rerank; it also
// returns return_documents.
func decodeRerank(params []byte) (RerankRequest, bool, error) {
	var p rerankParams
	if err := decodeParams(params, &p, "query and documents"); err != nil {
		return RerankRequest{}, false, err
	}
	switch {
	case p.Query == "":
		return RerankRequest{}, false, a2a.InvalidParams("/params/query", "query: required, a non-empty string")
	case len(p.Documents) == 0:
		return RerankRequest{}, false, a2a.InvalidParams("/params/documents", "documents: required, a non-empty array of strings")
	case p.TopN != nil && (*p.TopN < 1 || *p.TopN > 1<<31-1):
		return RerankRequest{}, false, a2a.InvalidParams("/params/top_n", fmt.Sprintf("top_n: must be at least 1, got %d", *p.TopN))
	}
	req := RerankRequest{Model: p.Model, Query: p.Query, Documents: p.Documents}
	if p.TopN != nil {
		req.TopN = int(*p.TopN)
	}
	return req, p.ReturnDocuments, nil
}

// chat answers ai/chat.
func (m *methods) chat(ctx context.Context, params []byte) (server.MethodResult, error) {
	req, stream, err := decodeChat(params)
	if err != nil {
		return server.MethodResult{}, err
	}
	if req.Model, err = m.model(req.Model, m.o.ChatModel); err != nil {
		return server.MethodResult{}, err
	}
	if req.Temperature == nil {
		req.Temperature = m.o.Temperature
	}
	if c := m.o.MaxTokens; c != nil && (req.MaxTokens == nil || *req.MaxTokens > *c) {
		v := *c // the cap: a larger max_tokens is lowered, not refused
		req.MaxTokens = &v
	}
	if stream {
		return server.MethodResult{Stream: m.chatStream(ctx, req)}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	res, err := m.p.Chat(cctx, req)
	if err != nil {
		return server.MethodResult{}, m.fail(ctx, cctx, err)
	}
	if res.Model == "" {
		res.Model = req.Model
	}
	b, err := json.Marshal(chatResult{Model: res.Model, FinishReason: res.FinishReason, Usage: chatUsage(res.Usage),
		Message: chatMessageJSON{Role: "assistant", Content: res.Content, Refusal: res.Refusal}})
	return server.MethodResult{Result: b}, err
}

// chatStream is the stream of a streaming ai/chat: one event per chunk
// of the provider's, the last with finish_reason; an error (or a stream
// that ends without a finish_reason) as the stream's last event.
func (m *methods) chatStream(ctx context.Context, req ChatRequest) func(yield func([]byte, error) bool) {
	return func(yield func([]byte, error) bool) {
		cctx, cancel := context.WithTimeout(ctx, m.timeout)
		defer cancel()
		for ch, err := range m.p.ChatStream(cctx, req) {
			if err != nil {
				if e := m.fail(ctx, cctx, err); ctx.Err() == nil {
					yield(nil, e)
				}
				return
			}
			if ch.Delta == "" && ch.Refusal == "" && ch.FinishReason == "" {
				continue
			}
			ev := chatEvent{Delta: ch.Delta, Refusal: ch.Refusal, FinishReason: ch.FinishReason}
			if ch.FinishReason != "" {
				ev.Model, ev.Usage = ch.Model, chatUsage(ch.Usage)
				if ev.Model == "" {
					ev.Model = req.Model
				}
			}
			b, err := json.Marshal(ev)
			if !yield(b, err) || err != nil {
				return
			}
			if ch.FinishReason != "" {
				return // the answer is complete
			}
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			yield(nil, ErrUpstreamTimeout.WithMessage("no complete answer from the upstream within %s (timeout)", m.timeout))
			return
		}
		yield(nil, ErrUpstream.WithMessage("the upstream's stream ended before the answer was finished (no finish_reason)"))
	}
}

// embeddings answers ai/embeddings.
func (m *methods) embeddings(ctx context.Context, params []byte) (server.MethodResult, error) {
	req, err := decodeEmbeddings(params)
	if err != nil {
		return server.MethodResult{}, err
	}
	if req.Model, err = m.model(req.Model, m.o.EmbeddingsModel); err != nil {
		return server.MethodResult{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	res, err := m.p.Embeddings(cctx, req)
	if err != nil {
		return server.MethodResult{}, m.fail(ctx, cctx, err)
	}
	if len(res.Embeddings) != len(req.Input) {
		return server.MethodResult{}, ErrUpstream.WithMessage("the upstream answered %d embeddings for %d inputs", len(res.Embeddings), len(req.Input))
	}
	out := embeddingsResult{Model: res.Model, Data: make([]embeddingJSON, len(res.Embeddings))}
	if out.Model == "" {
		out.Model = req.Model
	}
	for i, v := range res.Embeddings {
		if v == nil {
			v = []float32{}
		}
		out.Data[i] = embeddingJSON{Index: i, Embedding: v}
	}
	if u := res.Usage; u != nil {
		out.Usage = &usageJSON{PromptTokens: &u.PromptTokens, TotalTokens: u.TotalTokens}
	}
	b, err := json.Marshal(out)
	if err != nil { // a NaN or an infinity in a vector
		return server.MethodResult{}, ErrUpstream.WithMessage("the upstream's embeddings hold a value that is not a finite number")
	}
	return server.MethodResult{Result: b}, nil
}

// rerank answers ai/rerank.
func (m *methods) rerank(ctx context.Context, params []byte) (server.MethodResult, error) {
	req, withDocs, err := decodeRerank(params)
	if err != nil {
		return server.MethodResult{}, err
	}
	if req.Model, err = m.model(req.Model, m.o.RerankModel); err != nil {
		return server.MethodResult{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	res, err := m.p.Rerank(cctx, req)
	if err != nil {
		return server.MethodResult{}, m.fail(ctx, cctx, err)
	}
	out := rerankResult{Model: res.Model, Results: make([]rerankResultJSON, 0, len(res.Results))}
	if out.Model == "" {
		out.Model = req.Model
	}
	for _, r := range res.Results {
		if r.Index < 0 || r.Index >= len(req.Documents) {
			return server.MethodResult{}, ErrUpstream.WithMessage("the upstream's rerank answer names document %d of %d", r.Index, len(req.Documents))
		}
		j := rerankResultJSON{Index: r.Index, RelevanceScore: r.RelevanceScore}
		if withDocs {
			j.Document = &req.Documents[r.Index]
		}
		out.Results = append(out.Results, j)
	}
	if req.TopN > 0 && len(out.Results) > req.TopN {
		out.Results = out.Results[:req.TopN]
	}
	if res.Usage != nil {
		out.Usage = &usageJSON{TotalTokens: res.Usage.TotalTokens}
	}
	b, err := json.Marshal(out)
	if err != nil { // a NaN or an infinity
		return server.MethodResult{}, ErrUpstream.WithMessage("the upstream's rerank scores hold a value that is not a finite number")
	}
	return server.MethodResult{Result: b}, nil
}
