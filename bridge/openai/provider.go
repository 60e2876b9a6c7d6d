package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/telemetry"
)

// Provider performs the local AI operations behind the ai/* JSON-RPC
// methods (see Methods): chat completions, embeddings and reranking. The
// default is the OpenAI-compatible HTTP endpoint of NewHTTPProvider;
// inject another (a test double, an in-process model, a router over
// several endpoints) with Methods. A Provider must be safe for concurrent
// use.
//
// Requests arrive validated, with the model filled in. Errors: return an
// *a2a.Error to say what went wrong: ErrUpstreamTimeout, ErrModelNotFound,
// ErrRateLimited, ErrUpstreamUnauthorized or ErrUpstream specialised with
// WithMessage/WithData (their codes are documented with
// CodeUpstreamTimeout…), or a2a.InvalidParams when the upstream rejected
// the request as invalid. It is answered to the caller as it is, so it
// must not contain credentials. ctx's own error is taken as it is (a
// deadline set by Methods becomes CodeUpstreamTimeout); any other error
// is answered -32603 without its text (the server logs it).
type Provider interface {
	// Chat returns the whole answer to a conversation.
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
	// ChatStream streams the answer: each chunk as it arrives (Delta,
	// or Refusal), then one last chunk with FinishReason set (and
	// Model and Usage when known). An error ends the stream. A stream
	// that ends without a FinishReason is an incomplete answer. Work
	// starts when the stream is ranged over and stops when the range
	// stops early or ctx ends.
	ChatStream(ctx context.Context, req ChatRequest) iter.Seq2[ChatChunk, error]
	// Embeddings returns one vector per input, in input order.
	Embeddings(ctx context.Context, req EmbeddingsRequest) (EmbeddingsResponse, error)
	// Rerank scores the documents' relevance to the query, most
	// relevant first.
	Rerank(ctx context.Context, req RerankRequest) (RerankResponse, error)
}

// ChatMessage is one message of a conversation.
type ChatMessage struct {
	// Role is "system", "developer", "user" or "assistant".
	Role string
	// Content is the message's text.
	Content string
}

// ChatRequest asks for the next message of a conversation.
type ChatRequest struct {
	// Model names the model; never empty.
	Model string
	// Messages is the conversation so far, oldest first; never empty.
	Messages []ChatMessage
	// Temperature, when set, is the sampling temperature, in [0, 2].
	Temperature *float64
	// MaxTokens, when set, bounds the tokens of the answer; > 0.
	MaxTokens *int
}

// ChatResponse is a whole answer.
type ChatResponse struct {
	// Model is the model that answered, as the endpoint reported it.
	Model string
	// Content is the answer's text ("" when the model refused).
	Content string
	// Refusal is the model's refusal, when it refused.
	Refusal string
	// FinishReason is why the answer ended: "stop", "length",
	// "content_filter", ...
	FinishReason string
	// Usage is the token accounting, nil when the endpoint reported none.
	Usage *Usage
}

// ChatChunk is one piece of a streamed answer.
type ChatChunk struct {
	// Delta is the next piece of the answer's text.
	Delta string
	// Refusal is the next piece of a refusal.
	Refusal string
	// FinishReason, set on the last chunk only, is why the answer ended.
	FinishReason string
	// Model is the model that answered (last chunk; may be empty).
	Model string
	// Usage is the token accounting (last chunk; nil when unknown).
	Usage *Usage
}

// Usage is the token accounting of an operation.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
}

// EmbeddingsRequest asks for the embedding vectors of texts.
type EmbeddingsRequest struct {
	// Model names the embedding model; never empty.
	Model string
	// Input holds the texts, each non-empty; never empty.
	Input []string
	// Dimensions, when > 0, asks for vectors of this length (models
	// that support it).
	Dimensions int
}

// EmbeddingsResponse holds the vectors of an EmbeddingsRequest.
type EmbeddingsResponse struct {
	// Model is the model that answered.
	Model string
	// Embeddings holds one vector per input, in input order.
	Embeddings [][]float32
	// Usage is the token accounting (PromptTokens and TotalTokens), nil
	// when unknown.
	Usage *Usage
}

// RerankRequest asks for the relevance of documents to a query.
type RerankRequest struct {
	// Model names the reranking model; never empty.
	Model string
	// Query is the text the documents are scored against; not empty.
	Query string
	// Documents are the texts to score; never empty.
	Documents []string
	// TopN, when > 0, asks for only the TopN most relevant results.
	TopN int
}

// RerankResponse holds the scores of a RerankRequest.
type RerankResponse struct {
	// Model is the model that answered (may be empty).
	Model string
	// Results are the scored documents, most relevant first, at most
	// TopN of them when it was set.
	Results []RerankResult
	// Usage is the token accounting (TotalTokens), nil when unknown.
	Usage *Usage
}

// RerankResult is the relevance of one document.
type RerankResult struct {
	// Index is the document's position in RerankRequest.Documents.
	Index int
	// RelevanceScore is its relevance; higher is more relevant (the
	// scale is the model's, often [0, 1]).
	RelevanceScore float64
}

// HTTPOptions configure NewHTTPProvider.
type HTTPOptions struct {
	// BaseURL is the API base URL, as for Config.BaseURL (usually ending
	// in /v1). Requests go to BaseURL + "/chat/completions",
	// "/embeddings" and "/rerank". Required; http or https.
	BaseURL string
	// APIKey, when not empty, is sent as "Authorization: Bearer KEY".
	// Nothing is read from OPENAI_* environment variables.
	APIKey string
	// MaxRetries is the number of retries after a connection error or a
	// 408, 409, 429 or 5xx answer, as for Config.MaxRetries; nil means
	// DefaultMaxRetries.
	MaxRetries *int
	// HTTPClient sends the requests; nil means a client of the
	// provider's own with pooled connections (released by Close).
	HTTPClient *http.Client
	// MaxAnswerBytes bounds each response body as it is read (a streamed
	// chat completion's whole stream); 0 means DefaultMaxAnswerBytes
	// (16 MiB). A longer one is read no further: ErrUpstream naming the
	// limit.
	MaxAnswerBytes int64
}

// HTTPProvider is the Provider of an OpenAI-compatible HTTP endpoint (the
// OpenAI API, vLLM, llama.cpp's server, Ollama, LM Studio, Jina, ...):
//
//   - Chat and ChatStream: POST {base_url}/chat/completions through the
//     official client (github.com/openai/openai-go), streamed with
//     "stream_options": {"include_usage": true};
//   - Embeddings: POST {base_url}/embeddings through the official client,
//     "encoding_format": "float";
//   - Rerank: POST {base_url}/rerank in the Jina/Cohere shape
//     {"model", "query", "documents": [string], "top_n"?,
//     "return_documents": false}, answered {"results": [{"index",
//     "relevance_score"}], "model"?, "usage"?}; an answer that is an
//     array of {"index", "score"} (Hugging Face TEI) is read too.
//
// Failures are *a2a.Error values with the codes of CodeUpstreamTimeout…:
// HTTP 401 and 403 are CodeUpstreamUnauthorized, 404 naming the model
// CodeModelNotFound, 429 CodeRateLimited (with retryAfterSeconds when the
// endpoint sent Retry-After), 400 and 422 -32602 (the endpoint's message
// says why), other statuses, unreachable endpoints and answers that are
// not what the API defines CodeUpstream. Their messages never contain the
// API key.
type HTTPProvider struct {
	base     string // BaseURL without its password, for messages
	apiKey   string
	tr       *http.Transport // owned; nil when HTTPClient was given
	chat     oai.ChatCompletionService
	embed    oai.EmbeddingService
	requests *oai.Client // for rerank: options only, no environment
	limit    int64       // HTTPOptions.MaxAnswerBytes, its default applied
}

var _ Provider = (*HTTPProvider)(nil)

// NewHTTPProvider returns the Provider of the endpoint at o.BaseURL. It
// fails when o.BaseURL is not an http or https URL or o.APIKey contains a
// line break, or o.MaxRetries is outside 0..10. It does no network I/O.
func NewHTTPProvider(o HTTPOptions) (*HTTPProvider, error) {
	var errs []error
	if msg := checkBaseURL(o.BaseURL); msg != "" {
		errs = append(errs, errors.New("openai: base URL: "+msg))
	}
	if strings.ContainsAny(o.APIKey, "\r\n") {
		errs = append(errs, errors.New("openai: API key: contains a line break"))
	}
	retries := DefaultMaxRetries
	if o.MaxRetries != nil {
		retries = *o.MaxRetries
		if retries < 0 || retries > 10 {
			errs = append(errs, fmt.Errorf("openai: max retries: must be between 0 and 10, got %d", retries))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	u, _ := url.Parse(o.BaseURL)
	p := &HTTPProvider{base: redactURL(u), apiKey: o.APIKey, limit: o.MaxAnswerBytes}
	if p.limit <= 0 {
		p.limit = DefaultMaxAnswerBytes
	}
	hc := o.HTTPClient
	if hc == nil {
		p.tr = pooledTransport()
		hc = &http.Client{Transport: telemetry.Transport(p.tr, "openai")}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(o.BaseURL, "/") + "/"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(retries),
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	// The services alone, not oai.NewClient: a client would also read
	// OPENAI_API_KEY, OPENAI_BASE_URL and friends from the environment.
	p.chat = oai.NewChatCompletionService(opts...)
	p.embed = oai.NewEmbeddingService(opts...)
	p.requests = &oai.Client{Options: opts}
	return p, nil
}

// pooledTransport is a transport with a pool sized for a gateway.
func pooledTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64
	tr.IdleConnTimeout = 90 * time.Second
	return tr
}

// Close releases the idle connections of the provider's own HTTP client
// (none when HTTPOptions.HTTPClient was given). It may still be used.
func (p *HTTPProvider) Close() error {
	if p.tr != nil {
		p.tr.CloseIdleConnections()
	}
	return nil
}

// upstreamChatParams is req for the official client.
func upstreamChatParams(req ChatRequest) oai.ChatCompletionNewParams {
	msgs := make([]oai.ChatCompletionMessageParamUnion, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case "system":
			msgs[i] = oai.SystemMessage(m.Content)
		case "developer":
			msgs[i] = oai.DeveloperMessage(m.Content)
		case "assistant":
			msgs[i] = oai.AssistantMessage(m.Content)
		default:
			msgs[i] = oai.UserMessage(m.Content)
		}
	}
	params := oai.ChatCompletionNewParams{Model: req.Model, Messages: msgs}
	if req.Temperature != nil {
		params.Temperature = oai.Float(*req.Temperature)
	}
	if req.MaxTokens != nil {
		params.MaxTokens = oai.Int(int64(*req.MaxTokens))
	}
	return params
}

// Chat implements Provider: POST {base_url}/chat/completions.
func (p *HTTPProvider) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	up := upstream{limit: p.limit}
	res, err := p.chat.New(ctx, upstreamChatParams(req), option.WithMiddleware(up.observe))
	if err != nil {
		return ChatResponse{}, p.fail(ctx, err, &up, req.Model, "chat/completions")
	}
	if len(res.Choices) == 0 {
		return ChatResponse{}, ErrUpstream.WithMessage("the endpoint's answer has no choices")
	}
	c := res.Choices[0]
	out := ChatResponse{Model: res.Model, Content: c.Message.Content, Refusal: c.Message.Refusal, FinishReason: c.FinishReason}
	if out.Model == "" {
		out.Model = req.Model
	}
	if res.JSON.Usage.Valid() {
		out.Usage = &Usage{res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.TotalTokens}
	}
	return out, nil
}

// ChatStream implements Provider: POST {base_url}/chat/completions with
// "stream": true. An answer that got its finish_reason ends with its last
// chunk even if the stream then breaks (before the usage or [DONE]).
func (p *HTTPProvider) ChatStream(ctx context.Context, req ChatRequest) iter.Seq2[ChatChunk, error] {
	return func(yield func(ChatChunk, error) bool) {
		params := upstreamChatParams(req)
		params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
		up := upstream{limit: p.limit}
		stream := p.chat.NewStreaming(ctx, params, option.WithMiddleware(up.observe))
		defer stream.Close()
		last := ChatChunk{Model: req.Model}
		for stream.Next() {
			ch := stream.Current()
			if ch.Model != "" {
				last.Model = ch.Model
			}
			if ch.JSON.Usage.Valid() {
				last.Usage = &Usage{ch.Usage.PromptTokens, ch.Usage.CompletionTokens, ch.Usage.TotalTokens}
			}
			for _, c := range ch.Choices {
				if c.Index != 0 || last.FinishReason != "" {
					continue // n is 1; nothing counts after the finish
				}
				if c.Delta.Content != "" || c.Delta.Refusal != "" {
					if !yield(ChatChunk{Delta: c.Delta.Content, Refusal: c.Delta.Refusal}, nil) {
						return
					}
				}
				last.FinishReason = c.FinishReason
			}
		}
		if last.FinishReason != "" {
			yield(last, nil) // complete, whatever broke after it
			return
		}
		if err := stream.Err(); err != nil {
			yield(ChatChunk{}, p.fail(ctx, err, &up, req.Model, "chat/completions"))
		}
	}
}

// Embeddings implements Provider: POST {base_url}/embeddings.
func (p *HTTPProvider) Embeddings(ctx context.Context, req EmbeddingsRequest) (EmbeddingsResponse, error) {
	params := oai.EmbeddingNewParams{
		Input:          oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: req.Input},
		Model:          req.Model,
		EncodingFormat: oai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if req.Dimensions > 0 {
		params.Dimensions = oai.Int(int64(req.Dimensions))
	}
	up := upstream{limit: p.limit}
	res, err := p.embed.New(ctx, params, option.WithMiddleware(up.observe))
	if err != nil {
		return EmbeddingsResponse{}, p.fail(ctx, err, &up, req.Model, "embeddings")
	}
	out := EmbeddingsResponse{Model: res.Model, Embeddings: make([][]float32, len(req.Input))}
	if out.Model == "" {
		out.Model = req.Model
	}
	if len(res.Data) != len(req.Input) {
		return EmbeddingsResponse{}, ErrUpstream.WithMessage("the endpoint answered %d embeddings for %d inputs", len(res.Data), len(req.Input))
	}
	for _, d := range res.Data {
		i := d.Index
		if i < 0 || i >= int64(len(out.Embeddings)) || out.Embeddings[i] != nil {
			return EmbeddingsResponse{}, ErrUpstream.WithMessage("the endpoint's answer has a bad or repeated embedding index %d", i)
		}
		v := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			v[j] = float32(f)
		}
		out.Embeddings[i] = v
	}
	if res.JSON.Usage.Valid() {
		out.Usage = &Usage{PromptTokens: res.Usage.PromptTokens, TotalTokens: res.Usage.TotalTokens}
	}
	return out, nil
}

// rerankBody is the request body of POST {base_url}/rerank.
type rerankBody struct {
	Model           string   `json:"model"`
	Query           string   `json:"query"`
	Documents       []string `json:"documents"`
	TopN            int      `json:"top_n,omitempty"`
	ReturnDocuments bool     `json:"return_documents"`
}

// Rerank implements Provider: POST {base_url}/rerank.
func (p *HTTPProvider) Rerank(ctx context.Context, req RerankRequest) (RerankResponse, error) {
	body, err := json.Marshal(rerankBody{Model: req.Model, Query: req.Query, Documents: req.Documents, TopN: req.TopN})
	if err != nil {
		return RerankResponse{}, err
	}
	up := upstream{limit: p.limit}
	var raw []byte
	if err := p.requests.Post(ctx, "rerank", body, &raw, option.WithMiddleware(up.observe)); err != nil {
		return RerankResponse{}, p.fail(ctx, err, &up, req.Model, "rerank")
	}
	res, err := parseRerank(raw, len(req.Documents))
	if err != nil {
		return RerankResponse{}, ErrUpstream.WithMessage("the endpoint's rerank answer is not valid: %s", clean(err.Error(), 200))
	}
	if req.TopN > 0 && len(res.Results) > req.TopN {
		res.Results = res.Results[:req.TopN]
	}
	if res.Model == "" {
		res.Model = req.Model
	}
	return res, nil
}

// parseRerank reads a rerank answer for n documents: {"results": [{"index",
// "relevance_score" (or "score")}], "model"?, "usage"?: {"total_tokens"}}
// (Jina, Cohere, vLLM, llama.cpp) or an array of {"index", "score"} (TEI).
// Each index must be a document's (0 <= index < n), at most once, each
// score a finite number. The results are sorted most relevant first
// (stable: equal scores keep the answer's order).
func parseRerank(body []byte, n int) (RerankResponse, error) {
	type result struct {
		Index          *int     `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
		Score          *float64 `json:"score"`
	}
	var obj struct {
		Model   string    `json:"model"`
		Results *[]result `json:"results"`
		Usage   *struct {
			TotalTokens *int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	var list []result
	trimmed := strings.TrimSpace(string(body))
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := json.Unmarshal(body, &list); err != nil {
			return RerankResponse{}, errors.New("not JSON of the rerank shape")
		}
	case strings.HasPrefix(trimmed, "{"):
		if err := json.Unmarshal(body, &obj); err != nil {
			return RerankResponse{}, errors.New("not JSON of the rerank shape")
		}
		if obj.Results == nil {
			return RerankResponse{}, errors.New(`no "results"`)
		}
		list = *obj.Results
	default:
		return RerankResponse{}, errors.New("not a JSON object")
	}
	out := RerankResponse{Model: obj.Model, Results: make([]RerankResult, 0, len(list))}
	seen := make(map[int]bool, len(list))
	for i, r := range list {
		score := r.RelevanceScore
		if score == nil {
			score = r.Score
		}
		switch {
		case r.Index == nil:
			return RerankResponse{}, fmt.Errorf("results[%d] has no index", i)
		case *r.Index < 0 || *r.Index >= n:
			return RerankResponse{}, fmt.Errorf("results[%d].index %d is not one of the %d documents", i, *r.Index, n)
		case seen[*r.Index]:
			return RerankResponse{}, fmt.Errorf("results[%d].index %d is repeated", i, *r.Index)
		case score == nil:
			return RerankResponse{}, fmt.Errorf("results[%d] has no relevance_score", i)
		case math.IsNaN(*score) || math.IsInf(*score, 0):
			return RerankResponse{}, fmt.Errorf("results[%d].relevance_score is not a finite number", i)
		}
		seen[*r.Index] = true
		out.Results = append(out.Results, RerankResult{Index: *r.Index, RelevanceScore: *score})
	}
	slices.SortStableFunc(out.Results, func(a, b RerankResult) int {
		switch {
		case a.RelevanceScore > b.RelevanceScore:
			return -1
		case a.RelevanceScore < b.RelevanceScore:
			return 1
		}
		return 0
	})
	if obj.Usage != nil && obj.Usage.TotalTokens != nil {
		out.Usage = &Usage{TotalTokens: *obj.Usage.TotalTokens}
	}
	return out, nil
}

// fail turns a failed request to {base_url}/{path} into the error to
// answer (see HTTPProvider).
func (p *HTTPProvider) fail(ctx context.Context, err error, up *upstream, model, path string) error {
	if e := ctx.Err(); e != nil {
		if !errors.Is(e, context.DeadlineExceeded) {
			return e // the caller went away
		}
		if up.status == http.StatusTooManyRequests {
			return p.rateLimited(up, " and the deadline passed while waiting to retry")
		}
		return ErrUpstreamTimeout.WithMessage("no answer from %s before the deadline (timeout)", p.url(path))
	}
	if up.overLimit {
		return ErrUpstream.WithMessage("%s", p.redact(fmt.Sprintf("the answer of %s passed max_answer_bytes (%d bytes); it was read no further", p.url(path), up.limit)))
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		msg := errorMessage(se.Event.Data)
		if msg == "" {
			msg = "no details"
		}
		return ErrUpstream.WithMessage("%s", p.redact("the endpoint reported an error during the answer: "+msg))
	}
	if s := up.status; s >= 400 {
		detail := ""
		if msg := errorMessage(up.body); msg != "" {
			detail = ": " + msg
		}
		switch {
		case s == http.StatusUnauthorized:
			if p.apiKey == "" {
				return ErrUpstreamUnauthorized.WithMessage("the endpoint requires an API key (HTTP 401); none is configured (api_key)")
			}
			return ErrUpstreamUnauthorized.WithMessage("the endpoint rejected the API key (HTTP 401)")
		case s == http.StatusForbidden:
			return ErrUpstreamUnauthorized.WithMessage("%s", p.redact(fmt.Sprintf("the endpoint denied access to model %q (HTTP 403)%s", model, detail)))
		case s == http.StatusNotFound && modelNotFound(up.body):
			return ErrModelNotFound.WithMessage("%s", p.redact(fmt.Sprintf("model %q not found at %s (HTTP 404)%s", model, p.base, detail))).
				WithData(map[string]any{"model": model})
		case s == http.StatusNotFound:
			return ErrUpstream.WithMessage("%s", p.redact(fmt.Sprintf("%s not found (HTTP 404): the endpoint does not serve it, or base_url is wrong (it usually ends in /v1)%s", p.url(path), detail))).
				WithData(map[string]any{"upstreamStatus": s})
		case s == http.StatusTooManyRequests:
			tries := ""
			if up.attempts > 1 {
				tries = fmt.Sprintf(" after %d attempts", up.attempts)
			}
			return p.rateLimited(up, tries+detail)
		case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
			return &a2a.Error{Code: a2a.CodeInvalidParams, Message: p.redact(fmt.Sprintf("Invalid parameters: the endpoint rejected the request (HTTP %d)%s", s, detail)),
				Data: map[string]any{"upstreamStatus": s}}
		default:
			return ErrUpstream.WithMessage("%s", p.redact(fmt.Sprintf("the endpoint failed (HTTP %d %s)%s", s, http.StatusText(s), detail))).
				WithData(map[string]any{"upstreamStatus": s})
		}
	}
	var dns *net.DNSError
	var ue *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrUpstream.WithMessage("cannot connect to %s (connection refused)", p.base)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrUpstream.WithMessage("the connection to %s was closed before the answer was complete", p.base)
	case errors.As(err, &dns):
		return ErrUpstream.WithMessage("cannot resolve the host of %s (%s)", p.base, clean(dns.Err, 200))
	case errors.As(err, &ue):
		return ErrUpstream.WithMessage("%s", p.redact(fmt.Sprintf("request to %s failed: %s", p.base, clean(ue.Err.Error(), 300))))
	}
	return ErrUpstream.WithMessage("%s", p.redact("the endpoint's answer is not valid: "+clean(err.Error(), 300)))
}

// rateLimited is the CodeRateLimited error of a 429, with
// retryAfterSeconds when the endpoint said when to retry.
func (p *HTTPProvider) rateLimited(up *upstream, detail string) *a2a.Error {
	e := ErrRateLimited.WithMessage("%s", p.redact("rate limited by the endpoint (HTTP 429)"+detail))
	if s, ok := retryAfterSeconds(up.retryAfter, time.Now()); ok {
		e = e.WithData(map[string]any{"retryAfterSeconds": s})
	}
	return e
}

// retryAfterSeconds reads a Retry-After value (RFC 9110 §10.2.3: seconds,
// or an HTTP date) as whole seconds from now, rounded up, at least 0.
func retryAfterSeconds(v string, now time.Time) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return int64(math.Ceil(min(max(f, 0), math.MaxInt32))), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, true
	}
	return int64(math.Ceil(d.Seconds())), true
}

// url is the endpoint's URL for path, without credentials.
func (p *HTTPProvider) url(path string) string { return strings.TrimRight(p.base, "/") + "/" + path }

// redact removes the API key from a text shown to callers.
func (p *HTTPProvider) redact(s string) string {
	if p.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, p.apiKey, "[redacted]")
}
