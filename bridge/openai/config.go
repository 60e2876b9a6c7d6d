package openai

import (
	"errors"
	"fmt"
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
)

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
//	    timeout: 120s
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
	MaxTokens *int `yaml:"max_tokens"`
	// History is the maximum number of earlier messages (user messages
	// and answers, each counted) sent before the new message, the most
	// recent kept; nil means DefaultHistory (20), 0 sends none. Without
	// MultiTurn they come from the earlier tasks of the same contextId;
	// with MultiTurn from the task's own conversation. At most
	// server.MaxContextHistory (100) earlier tasks are read.
	History *int `yaml:"history"`
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
}

// Validate reports every problem of c, each as an error naming its key
// (e.g. "base_url: required"), joined with errors.Join; nil when c is
// usable.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	switch u, err := url.Parse(c.BaseURL); {
	case strings.TrimSpace(c.BaseURL) == "":
		bad("base_url", "required")
	case err != nil:
		bad("base_url", "not a URL: %v", errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		bad("base_url", "must be an http or https URL, got %q", redactURL(u))
	case u.Host == "":
		bad("base_url", "has no host")
	case u.RawQuery != "" || u.Fragment != "":
		bad("base_url", "must not have a query or fragment")
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
	if c.Timeout < 0 {
		bad("timeout", "must be > 0, got %s", c.Timeout)
	}
	if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 10) {
		bad("max_retries", "must be between 0 and 10, got %d", *c.MaxRetries)
	}
	return errors.Join(errs...)
}

// redactURL returns u as text without its password.
func redactURL(u *url.URL) string { return u.Redacted() }
