package openai

import (
	"errors"
	"fmt"

	"github.com/a2abridge/a2abridge/internal/egress"
	"net/url"
	"strings"
	"time"
)

// Defaults of the Config fields left unset.
const (
	// DefaultHistory is the number of earlier messages sent as
	// conversation history when Config.History is nil.
	DefaultHistory = 20
	// DefaultTimeout bounds a whole completion (all attempts and the
	// whole stream) when Config.Timeout is 0.
	DefaultTimeout = 120 * time.Second
	// DefaultMaxRetries is the number of retries after a connection
	// error, 408, 409, 429 or 5xx answer when Config.MaxRetries is nil.
	DefaultMaxRetries = 2
	// DefaultMaxHistoryBytes bounds the conversation history sent with a
	// message (256 KiB of UTF-8 text, all earlier messages together)
	// when Config.MaxHistoryBytes is nil.
	DefaultMaxHistoryBytes = 256 << 10
	// DefaultMaxOutput bounds the answer of one message (its text and
	// refusal) when Config.MaxOutput is 0: 64 MiB.
	DefaultMaxOutput = 64 << 20
	// DefaultMaxAnswerBytes bounds an upstream answer of an ai/* method
	// (the body of a chat completion, an embeddings or a rerank
	// response, or a streamed chat completion) when Config.MaxAnswerBytes
	// is 0: 16 MiB.
	DefaultMaxAnswerBytes = 16 << 20
)

// AnyModel, as an element of Config.Models or MethodOptions.Models, lets
// ai/* calls name any model of the endpoint.
const AnyModel = "*"

// Config configures an OpenAI-compatible chat completions agent (kind
// "openai" of `a2abridge serve --config`). The yaml keys are the
// configuration file's; secrets (api_key) arrive already expanded from
// ${ENV}.
//
//	agents:
//	  llama:
//	    kind: openai
//	    base_url: http://127.0.0.1:11434/v1
//	    model: llama3.2
//	    api_key: ${OLLAMA_KEY}
//	    system: You are terse.
//	    temperature: 0.2
//	    max_tokens: 512
//	    history: 20
//	    max_history_bytes: 262144
//	    timeout: 120s
//	    embeddings_model: nomic-embed-text
//	    rerank_model: bge-reranker-v2-m3
type Config struct {
	// BaseURL is the API base URL, the one an OpenAI client is given,
	// usually ending in /v1 (e.g. http://127.0.0.1:11434/v1 for Ollama,
	// http://127.0.0.1:8000/v1 for vLLM, https://api.openai.com/v1).
	// Requests go to BaseURL + "/chat/completions". Required; http or
	// https.
	BaseURL string `yaml:"base_url"`
	// Model is the model name sent with every request. Required.
	Model string `yaml:"model"`
	// APIKey, when not empty, is sent as "Authorization: Bearer KEY".
	// Nothing is read from OPENAI_* environment variables.
	APIKey string `yaml:"api_key"`
	// System, when not empty, is sent as the first ("system") message.
	System string `yaml:"system"`
	// Temperature, when set, is the sampling temperature, in [0, 2].
	Temperature *float64 `yaml:"temperature"`
	// MaxTokens, when set, bounds the tokens of each answer (sent as
	// "max_tokens", which OpenAI-compatible servers understand); > 0.
	// It is also the cap of ai/chat: a call asking for more (or for no
	// bound) is sent with MaxTokens instead. nil: no bound of ours (the
	// endpoint's own applies).
	MaxTokens *int `yaml:"max_tokens"`
	// History is the maximum number of earlier messages (user messages
	// and answers, each counted) sent before the new message, the most
	// recent kept; nil means DefaultHistory (20), 0 sends none. Without
	// MultiTurn they come from the earlier tasks of the same contextId;
	// with MultiTurn from the task's own conversation. At most
	// server.MaxContextHistory (100) earlier tasks are read.
	History *int `yaml:"history"`
	// MaxHistoryBytes bounds the text of the history sent (all earlier
	// messages together, in bytes of UTF-8 text): the most recent
	// messages are kept, the one that crosses the bound is cut (its
	// beginning kept, " […]" marking the cut) and older ones are left
	// out. Texts are cut while they are built, so a context holding huge
	// messages costs no more than this per request (beside the stored
	// tasks themselves, which are read whole). nil means
	// DefaultMaxHistoryBytes (256 KiB); > 0.
	MaxHistoryBytes *int `yaml:"max_history_bytes"`
	// MultiTurn keeps one task open per conversation: after each answer
	// the task waits in input-required (the answer is its status
	// message) and the client's next message on the same task continues
	// the conversation. Without it each message gets an answer and its
	// task completes.
	MultiTurn bool `yaml:"multi_turn"`
	// Timeout bounds one completion from the request to the last token,
	// retries included; 0 means DefaultTimeout (120 s).
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetries is the number of retries after a connection error or a
	// 408, 409, 429 or 5xx answer, with exponential backoff (0.5 s, 1 s,
	// ... up to 8 s) or, when the endpoint sends Retry-After (or
	// Retry-After-Ms), after the time it asks for (at most 2 minutes);
	// nil means DefaultMaxRetries (2), 0 tries once.
	MaxRetries *int `yaml:"max_retries"`
	// MaxOutput bounds, in bytes, the model's answer to one message (its
	// text and refusal as streamed); 0 means DefaultMaxOutput (64 MiB).
	// Past it the upstream request is aborted and the task fails with a
	// reason naming max_output; what was streamed before stays in its
	// artifact.
	MaxOutput int64 `yaml:"max_output"`
	// MaxAnswerBytes bounds, in bytes, the upstream response of an ai/*
	// method as it is read (a streamed ai/chat counts its whole stream);
	// 0 means DefaultMaxAnswerBytes (16 MiB). A longer one is read no
	// further and answered with CodeUpstream naming max_answer_bytes.
	MaxAnswerBytes int64 `yaml:"max_answer_bytes"`
	// AllowHosts lists where the agent may send requests besides
	// base_url's origin (scheme, host and port), and which link-local or
	// cloud metadata addresses it may connect to. By default every
	// request, each redirect included, must be on that origin, and no
	// connection is made to a link-local (169.254.0.0/16, fe80::/10) or
	// metadata address, checked on the address each connection is made
	// to. Each entry is a host name (any port), host:port, *.domain, an IP
	// address or a CIDR.
	AllowHosts []string `yaml:"allow_hosts"`

	// AIMethods, when false, turns the JSON-RPC methods ai/chat,
	// ai/embeddings and ai/rerank off (Agent.Methods returns nil); nil
	// or true serves them (see the package doc). They spend the
	// configured api_key on the callers' requests: only on the models
	// Models allows and, for ai/chat, at most MaxTokens tokens per
	// answer; behind a hosted API, give the agent auth.
	AIMethods *bool `yaml:"ai_methods"`
	// EmbeddingsModel is the model of the ai/embeddings calls that name
	// none; "" means Model.
	EmbeddingsModel string `yaml:"embeddings_model"`
	// RerankModel is the model of the ai/rerank calls that name none; ""
	// means Model.
	RerankModel string `yaml:"rerank_model"`
	// Models are the models an ai/* call may name besides Model,
	// EmbeddingsModel and RerankModel (always allowed). Empty (the
	// default): only those configured ones; a call naming another model
	// is refused with -32602 (data.field "/params/model", the reason
	// listing the allowed models) and never reaches the endpoint. An
	// element "*" (AnyModel) allows any model of the endpoint: an
	// explicit opt-in, as every caller then spends api_key on the model
	// of its choice.
	Models []string `yaml:"models"`
	// CheckURL, if set, is called with the URL of every HTTP request the
	// agent is about to send (redirects included): an error refuses
	// the request, which then fails as an unreachable endpoint does. Not a
	// config key: a program whose callers choose the configuration (the
	// ad-hoc scenarios of the conversation bridge) confines the agent to
	// an allowlist with it.
	CheckURL func(*url.URL) error `yaml:"-"`
}

// Validate reports every problem of c, each as an error naming its key
// (e.g. "base_url: required"), joined with errors.Join; nil when c is
// usable.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if msg := checkBaseURL(c.BaseURL); msg != "" {
		bad("base_url", "%s", msg)
	}
	if strings.TrimSpace(c.Model) == "" {
		bad("model", "required")
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		bad("api_key", "contains a line break")
	}
	if c.Temperature != nil && !(*c.Temperature >= 0 && *c.Temperature <= 2) {
		bad("temperature", "must be between 0 and 2, got %v", *c.Temperature)
	}
	if c.MaxTokens != nil && *c.MaxTokens <= 0 {
		bad("max_tokens", "must be > 0, got %d", *c.MaxTokens)
	}
	if c.History != nil && *c.History < 0 {
		bad("history", "must be >= 0, got %d", *c.History)
	}
	if c.MaxHistoryBytes != nil && *c.MaxHistoryBytes <= 0 {
		bad("max_history_bytes", "must be > 0, got %d", *c.MaxHistoryBytes)
	}
	if c.BaseURL != "" && len(c.AllowHosts) > 0 {
		if _, err := egress.New(c.BaseURL, c.AllowHosts, "allow_hosts"); err != nil && strings.HasPrefix(err.Error(), "allow_hosts") {
			errs = append(errs, err)
		}
	}
	if c.MaxOutput < 0 {
		bad("max_output", "must be >= 0 (0: the default, %d bytes), got %d", DefaultMaxOutput, c.MaxOutput)
	}
	if c.MaxAnswerBytes < 0 {
		bad("max_answer_bytes", "must be >= 0 (0: the default, %d bytes), got %d", DefaultMaxAnswerBytes, c.MaxAnswerBytes)
	}
	if c.Timeout < 0 {
		bad("timeout", "must be > 0, got %s", c.Timeout)
	}
	if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 10) {
		bad("max_retries", "must be between 0 and 10, got %d", *c.MaxRetries)
	}
	for i, m := range c.Models {
		if strings.TrimSpace(m) == "" {
			bad(fmt.Sprintf("models[%d]", i), "empty")
		}
	}
	return errors.Join(errs...)
}

// checkBaseURL returns what is wrong with an API base URL, "" when
// nothing is.
func checkBaseURL(s string) string {
	switch u, err := url.Parse(s); {
	case strings.TrimSpace(s) == "":
		return "required"
	case err != nil:
		return fmt.Sprintf("not a URL: %v", errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("must be an http or https URL, got %q", redactURL(u))
	case u.Host == "":
		return "has no host"
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or fragment"
	}
	return ""
}

// redactURL returns u as text without its password.
func redactURL(u *url.URL) string { return u.Redacted() }
