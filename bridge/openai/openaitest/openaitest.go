// Package openaitest is a fake OpenAI-compatible HTTP server for tests: it
// speaks the wire format of the OpenAI API reference for
//
//   - POST /v1/chat/completions, streaming (Server-Sent Events of
//     "chat.completion.chunk" objects ending with "data: [DONE]", with a
//     final usage chunk when stream_options.include_usage is true) and not
//     streaming (one "chat.completion" object);
//   - POST /v1/embeddings (float or base64 vectors, derived from the input
//     text so that equal inputs get equal vectors);
//   - POST /v1/rerank, the Jina/Cohere/TEI shape: {model, query, documents,
//     top_n} answered {model, results: [{index, relevance_score}], usage};
//   - GET /v1/models;
//
// and answers errors as the API does: {"error": {"message", "type",
// "param", "code"}} with the HTTP status (401 invalid_api_key for a wrong
// API key once RequireKey is set; scripted: 404 model_not_found, 429
// rate_limit_exceeded with Retry-After, 5xx). Every model is known unless
// scripted otherwise (Script(name, Behavior{Status: 404})).
//
// What a model answers is scripted per model name (Script), per request
// (Hook) or by Default: the answer text streamed token by token (by
// default "You said: " and the last user message), a Gate that holds the
// stream after some tokens until the test releases it, an error status, a
// refusal, a finish reason, a stall. The server records every request it
// got (Requests), with its headers and the messages sent, and reports on
// Aborted the requests whose client went away before the answer was
// complete.
//
// The server listens on 127.0.0.1; Close stops it.
package openaitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Behavior scripts how the server answers a chat completion request. The
// zero Behavior answers "You said: <last user message>" in one chunk per
// word, finish_reason "stop".
type Behavior struct {
	// Reply is the answer text; "" means "You said: " followed by the
	// text of the last user message. It is split into tokens at word
	// boundaries (each token but the first starts with its space).
	Reply string
	// Tokens, when not nil, is the answer as explicit stream chunks
	// (overrides Reply).
	Tokens []string
	// Gate, when not nil, holds the answer after GateAfter content tokens
	// (0: before the first one; GateAfter >= the token count: before the
	// chunk with the finish reason) until Gate is closed or the request's
	// context ends (the request then counts as aborted). A non-streaming
	// answer waits for the Gate before it is sent.
	Gate      <-chan struct{}
	GateAfter int
	// Stall makes the server accept the request and answer nothing until
	// the client goes away (for timeouts). The request counts as aborted.
	Stall bool

	// Status, when not 0 or 200, answers the request with this HTTP error
	// status and an OpenAI error body: ErrorMessage, ErrorType and
	// ErrorCode, each defaulting to what the OpenAI API sends for the
	// status (401 invalid_api_key, 404 model_not_found, 429
	// rate_limit_exceeded, 500 server_error, ...).
	Status       int
	ErrorMessage string
	ErrorType    string
	ErrorCode    string
	// RetryAfter, when not "", is sent as the Retry-After header of an
	// error answer (seconds, or an HTTP date).
	RetryAfter string
	// Times limits the error (Status) to the first Times requests for the
	// model (0: every request); later requests get the normal answer.
	Times int

	// Refusal, when not "", streams this text in delta.refusal chunks
	// instead of content (the answer text is not sent), finish reason
	// "stop" unless FinishReason says otherwise.
	Refusal string
	// FinishReason is the finish_reason of the last choice chunk; ""
	// means "stop".
	FinishReason string
	// Truncate ends the stream after the content tokens without the
	// finish reason, the usage chunk and "data: [DONE]" (a dropped
	// connection).
	Truncate bool
	// NoDone ends the stream after the finish reason (and the usage
	// chunk) without "data: [DONE]".
	NoDone bool
	// StreamError, when not "", is sent after the content tokens as an
	// SSE event {"error": {"message": StreamError, ...}} and the stream
	// ends (as the API reports a failure after the response started).
	StreamError string
	// Usage, when not nil, replaces the usage the server reports
	// (otherwise prompt_tokens counts the words of all messages,
	// completion_tokens the chunks sent, total_tokens their sum).
	Usage *Usage
}

// Usage is the token accounting of a completion ("usage" in the API).
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Message is one chat message of a request: its role ("system", "user",
// "assistant", "developer", "tool") and its content as text (array
// content is joined from its text parts).
type Message struct {
	Role    string
	Content string
}

// Request is what the server recorded of one request.
type Request struct {
	// Seq numbers the requests in arrival order, from 1.
	Seq int
	// Time is when the request arrived.
	Time time.Time
	// Method and Path are the request line's, e.g. "POST",
	// "/v1/chat/completions".
	Method string
	Path   string
	// Header holds the request headers, including Authorization.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Model is the body's "model"; Messages its "messages" (chat).
	Model    string
	Messages []Message
	// Stream and IncludeUsage are the body's "stream" and
	// "stream_options.include_usage".
	Stream       bool
	IncludeUsage bool
	// Temperature, MaxTokens and MaxCompletionTokens are the body's
	// sampling fields when present.
	Temperature         *float64
	MaxTokens           *int64
	MaxCompletionTokens *int64
	// Input, Query, Documents and TopN are the embeddings' and rerank's
	// fields.
	Input     []string
	Query     string
	Documents []string
	TopN      *int
	// Aborted reports that the client went away before the answer was
	// complete (read it after receiving the request from Server.Aborted).
	Aborted bool
}

// Server is a running fake. Its fields may be set before the first
// request; Script, Hook and RequireKey may be called at any time.
type Server struct {
	// URL is the API base URL, "http://127.0.0.1:PORT/v1", as an
	// OpenAI client's base_url.
	URL string
	// Dimensions is the length of embedding vectors (default 8).
	Dimensions int

	ts      *httptest.Server
	aborted chan *Request
	seq     atomic.Int64

	mu       sync.Mutex
	key      string
	scripts  map[string]Behavior
	def      Behavior
	hook     func(*Request) *Behavior
	count    map[string]int
	requests []*Request
}

// New starts a fake server on 127.0.0.1. Every model is known and
// answered with the zero Behavior until scripted otherwise.
func New() *Server {
	s := &Server{
		Dimensions: 8,
		aborted:    make(chan *Request, 256),
		scripts:    map[string]Behavior{},
		count:      map[string]int{},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("openaitest: listen: %v", err))
	}
	s.ts = &httptest.Server{Listener: l, Config: &http.Server{Handler: s}}
	s.ts.Start()
	s.URL = s.ts.URL + "/v1"
	return s
}

// Close stops the server, ending open requests.
func (s *Server) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Script sets the behavior for requests naming model.
func (s *Server) Script(model string, b Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[model] = b
	delete(s.count, model)
}

// Default sets the behavior for models without a Script.
func (s *Server) Default(b Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = b
}

// Hook sets a function consulted first for every chat completion request;
// a nil result falls back to the model's Script, then to Default.
func (s *Server) Hook(f func(*Request) *Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = f
}

// RequireKey makes the server answer 401 (invalid_api_key) to every
// request without the header "Authorization: Bearer KEY"; "" accepts any.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Requests returns copies of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// LastRequest returns a copy of the latest request received and whether
// there was one.
func (s *Server) LastRequest() (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return *s.requests[len(s.requests)-1], true
}

// Aborted delivers each request whose client went away (its context
// ended) before the server finished answering it. The channel holds up
// to 256 such requests; later ones are dropped.
func (s *Server) Aborted() <-chan *Request { return s.aborted }

func (s *Server) abort(r *Request) {
	s.mu.Lock()
	r.Aborted = true
	s.mu.Unlock()
	select {
	case s.aborted <- r:
	default:
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "could not read the request body", "invalid_request_error", "", "")
		return
	}
	rec := &Request{Seq: int(s.seq.Add(1)), Time: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	key := s.key
	s.mu.Unlock()

	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid_request_error", "", "invalid_api_key")
		return
	}
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	switch route {
	case "POST /v1/chat/completions":
		s.chat(w, r, rec)
	case "POST /v1/embeddings":
		s.embeddings(w, rec)
	case "POST /v1/rerank":
		s.rerank(w, rec)
	case "GET /v1/models":
		s.models(w)
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "invalid_request_error", "", "")
	}
}

// ParseChatRequest decodes a chat completions request body into rec's
// Model, Messages, Stream, IncludeUsage, Temperature, MaxTokens and
// MaxCompletionTokens. Message content may be a string or an array of
// content parts (their "text" fields are joined). It returns an error for
// a body that is not a JSON object or whose fields have the wrong types.
func ParseChatRequest(body []byte, rec *Request) error {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Temperature         *float64 `json:"temperature"`
		MaxTokens           *int64   `json:"max_tokens"`
		MaxCompletionTokens *int64   `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	rec.Model, rec.Stream = in.Model, in.Stream
	rec.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	rec.Temperature, rec.MaxTokens, rec.MaxCompletionTokens = in.Temperature, in.MaxTokens, in.MaxCompletionTokens
	rec.Messages = rec.Messages[:0]
	for i, m := range in.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return fmt.Errorf("messages[%d].content: %w", i, err)
		}
		rec.Messages = append(rec.Messages, Message{Role: m.Role, Content: text})
	}
	return nil
}

// contentText returns a message content's text: a string, null, or an
// array of parts whose "text" fields are joined.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// failAsTold answers with the error b tells (its status, not 200) and
// reports whether it did: a Retry-After when b has one, and the message,
// type and code b gives or OpenAI's for that status.
func failAsTold(w http.ResponseWriter, b Behavior, model string) bool {
	if b.Status == 0 || b.Status == http.StatusOK {
		return false
	}
	if b.RetryAfter != "" {
		w.Header().Set("Retry-After", b.RetryAfter)
	}
	msg, typ, code := errorDefaults(b.Status, model)
	writeError(w, b.Status, or(b.ErrorMessage, msg), or(b.ErrorType, typ), "", or(b.ErrorCode, code))
	return true
}

// behavior picks the behavior for rec and whether its error applies.
func (s *Server) behavior(rec *Request) Behavior {
	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		if hb := hook(rec); hb != nil {
			return *hb
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.scripts[rec.Model]
	if !ok {
		b = s.def
	}
	if b.Status != 0 && b.Status != http.StatusOK && b.Times > 0 {
		s.count[rec.Model]++
		if s.count[rec.Model] > b.Times {
			b.Status = 0
		}
	}
	return b
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, rec *Request) {
	var parsed Request
	if err := ParseChatRequest(rec.Body, &parsed); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "", "")
		return
	}
	s.mu.Lock()
	rec.Model, rec.Messages, rec.Stream, rec.IncludeUsage = parsed.Model, parsed.Messages, parsed.Stream, parsed.IncludeUsage
	rec.Temperature, rec.MaxTokens, rec.MaxCompletionTokens = parsed.Temperature, parsed.MaxTokens, parsed.MaxCompletionTokens
	s.mu.Unlock()
	switch {
	case rec.Model == "":
		writeError(w, http.StatusBadRequest, "you must provide a model parameter", "invalid_request_error", "model", "")
		return
	case len(rec.Messages) == 0:
		writeError(w, http.StatusBadRequest, "[] is too short - 'messages'", "invalid_request_error", "messages", "")
		return
	}
	b := s.behavior(rec)
	ctx := r.Context()
	if b.Stall {
		<-ctx.Done()
		s.abort(rec)
		return
	}
	if failAsTold(w, b, rec.Model) {
		return
	}

	tokens := b.Tokens
	if tokens == nil {
		reply := b.Reply
		if reply == "" {
			reply = "You said: " + lastUser(rec.Messages)
		}
		tokens = Tokenize(reply)
	}
	finish := or(b.FinishReason, "stop")
	usage := Usage{PromptTokens: promptTokens(rec.Messages), CompletionTokens: int64(len(tokens))}
	if b.Refusal != "" {
		usage.CompletionTokens = int64(len(Tokenize(b.Refusal)))
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	if b.Usage != nil {
		usage = *b.Usage
	}
	id := fmt.Sprintf("chatcmpl-%d", rec.Seq)
	created := time.Now().Unix()
	wait := func() bool {
		if b.Gate == nil {
			return true
		}
		select {
		case <-b.Gate:
			return true
		case <-ctx.Done():
			s.abort(rec)
			return false
		}
	}

	if !rec.Stream {
		if !wait() {
			return
		}
		msg := map[string]any{"role": "assistant", "content": strings.Join(tokens, ""), "refusal": nil}
		if b.Refusal != "" {
			msg["content"], msg["refusal"] = nil, b.Refusal
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": rec.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":   usage, "system_fingerprint": "fp_openaitest",
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Request-Id", id)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			s.abort(rec)
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rec.Model,
			"system_fingerprint": "fp_openaitest",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if rec.IncludeUsage {
			c["usage"] = nil
		}
		return c
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)) {
		return
	}
	stream := tokens
	field := "content"
	if b.Refusal != "" {
		stream, field = Tokenize(b.Refusal), "refusal"
	}
	for i, tok := range stream {
		if i == b.GateAfter && !wait() {
			return
		}
		if ctx.Err() != nil {
			s.abort(rec)
			return
		}
		if !send(chunk(map[string]any{field: tok}, nil)) {
			return
		}
	}
	if b.GateAfter >= len(stream) && !wait() {
		return
	}
	if b.StreamError != "" {
		send(map[string]any{"error": map[string]any{"message": b.StreamError, "type": "server_error", "param": nil, "code": nil}})
		return
	}
	if b.Truncate {
		return
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	if rec.IncludeUsage {
		if !send(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rec.Model,
			"system_fingerprint": "fp_openaitest", "choices": []any{}, "usage": usage,
		}) {
			return
		}
	}
	if b.NoDone {
		return
	}
	if _, err := io.WriteString(w, "data: [DONE]\n\n"); err != nil {
		s.abort(rec)
		return
	}
	if fl != nil {
		fl.Flush()
	}
}

// errorDefaults returns the message, type and code the OpenAI API sends
// with status.
func errorDefaults(status int, model string) (msg, typ, code string) {
	switch status {
	case http.StatusUnauthorized:
		return "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "You are not allowed to sample from this model", "invalid_request_error", "model_not_allowed"
	case http.StatusNotFound:
		return fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model), "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Rate limit reached for %s on requests per min (RPM): Limit 3, Used 3, Requested 1.", model), "requests", "rate_limit_exceeded"
	case http.StatusBadRequest:
		return "Invalid request", "invalid_request_error", ""
	}
	if status >= 500 {
		return "The server had an error while processing your request. Sorry about that!", "server_error", ""
	}
	return http.StatusText(status), "invalid_request_error", ""
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func lastUser(ms []Message) string {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "user" {
			return ms[i].Content
		}
	}
	return ""
}

func promptTokens(ms []Message) int64 {
	var n int64
	for _, m := range ms {
		n += int64(len(strings.Fields(m.Content))) + 1
	}
	return n
}

// Tokenize splits text into stream tokens at word boundaries: each token
// but the first starts with the white space before its word; joined, the
// tokens are text again.
func Tokenize(text string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if sp && !inSpace && i > start {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg, typ, param, code string) {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func (s *Server) embeddings(w http.ResponseWriter, rec *Request) {
	var in struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.Unmarshal(rec.Body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "", "")
		return
	}
	var inputs []string
	if err := json.Unmarshal(in.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(in.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "'input' must be a string or an array of strings", "invalid_request_error", "input", "")
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	rec.Model, rec.Input = in.Model, inputs
	s.mu.Unlock()
	if in.Model == "" {
		writeError(w, http.StatusBadRequest, "you must provide a model parameter", "invalid_request_error", "model", "")
		return
	}
	if failAsTold(w, s.behavior(rec), in.Model) {
		return
	}
	dims := in.Dimensions
	if dims <= 0 {
		dims = max(s.Dimensions, 1)
	}
	data := make([]any, len(inputs))
	var tokens int64
	for i, text := range inputs {
		vec := Embed(text, dims)
		tokens += int64(len(strings.Fields(text)))
		var emb any = vec
		if in.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": in.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// Embed returns the fake's embedding of text: a unit vector of dims
// float32s derived from the text's SHA-256, so equal texts get equal
// vectors.
func Embed(text string, dims int) []float32 {
	vec := make([]float32, dims)
	var norm float64
	for i := range vec {
		h := sha256.Sum256([]byte(strconv.Itoa(i) + "\x00" + text))
		v := float64(binary.LittleEndian.Uint32(h[:4]))/math.MaxUint32*2 - 1
		vec[i] = float32(v)
		norm += v * v
	}
	if norm > 0 {
		n := float32(math.Sqrt(norm))
		for i := range vec {
			vec[i] /= n
		}
	}
	return vec
}

func (s *Server) rerank(w http.ResponseWriter, rec *Request) {
	var in struct {
		Model           string            `json:"model"`
		Query           string            `json:"query"`
		Documents       []json.RawMessage `json:"documents"`
		TopN            *int              `json:"top_n"`
		ReturnDocuments bool              `json:"return_documents"`
	}
	if err := json.Unmarshal(rec.Body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "", "")
		return
	}
	docs := make([]string, len(in.Documents))
	for i, d := range in.Documents {
		if err := json.Unmarshal(d, &docs[i]); err != nil {
			var obj struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(d, &obj); err != nil {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("documents[%d] must be a string or {\"text\": string}", i), "invalid_request_error", "documents", "")
				return
			}
			docs[i] = obj.Text
		}
	}
	s.mu.Lock()
	rec.Model, rec.Query, rec.Documents, rec.TopN = in.Model, in.Query, docs, in.TopN
	s.mu.Unlock()
	switch {
	case in.Model == "":
		writeError(w, http.StatusBadRequest, "you must provide a model parameter", "invalid_request_error", "model", "")
		return
	case in.Query == "":
		writeError(w, http.StatusBadRequest, "query must not be empty", "invalid_request_error", "query", "")
		return
	case in.TopN != nil && *in.TopN < 0:
		writeError(w, http.StatusBadRequest, "top_n must be >= 0", "invalid_request_error", "top_n", "")
		return
	}
	if failAsTold(w, s.behavior(rec), in.Model) {
		return
	}
	type result struct {
		Index          int            `json:"index"`
		RelevanceScore float64        `json:"relevance_score"`
		Document       map[string]any `json:"document,omitempty"`
	}
	res := make([]result, len(docs))
	for i, d := range docs {
		res[i] = result{Index: i, RelevanceScore: Relevance(in.Query, d)}
		if in.ReturnDocuments {
			res[i].Document = map[string]any{"text": d}
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].RelevanceScore > res[j].RelevanceScore })
	if in.TopN != nil && *in.TopN < len(res) {
		res = res[:*in.TopN]
	}
	tokens := len(strings.Fields(in.Query))
	for _, d := range docs {
		tokens += len(strings.Fields(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": fmt.Sprintf("rerank-%d", rec.Seq), "model": in.Model, "results": res,
		"usage": map[string]any{"total_tokens": tokens}})
}

// Relevance is the fake's rerank score of document for query: the share
// of the query's distinct lower-cased words that occur in the document,
// in [0, 1].
func Relevance(query, document string) float64 {
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(query)) {
		words[w] = true
	}
	if len(words) == 0 {
		return 0
	}
	in := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(document)) {
		in[w] = true
	}
	hit := 0
	for w := range words {
		if in[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(words))
}

func (s *Server) models(w http.ResponseWriter) {
	s.mu.Lock()
	names := make([]string, 0, len(s.scripts))
	for m, b := range s.scripts {
		if b.Status != http.StatusNotFound {
			names = append(names, m)
		}
	}
	s.mu.Unlock()
	sort.Strings(names)
	data := make([]any, len(names))
	for i, m := range names {
		data[i] = map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "openaitest"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
