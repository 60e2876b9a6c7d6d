package command

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Defaults of the optional Config keys.
const (
	// DefaultTimeout is the run time allowed to a command when Config.Timeout is nil.
	DefaultTimeout = 60 * time.Second
	// DefaultKillGrace is the time between SIGTERM and SIGKILL when
	// Config.KillGrace is nil.
	DefaultKillGrace = 5 * time.Second
	// DefaultMaxOutput is the number of stdout bytes kept when
	// Config.MaxOutput is 0: 64 MiB.
	DefaultMaxOutput = 64 << 20
	// DefaultMaxConcurrency is the number of commands an agent runs at
	// once when Config.MaxConcurrency is 0.
	DefaultMaxConcurrency = 4
)

// Input formats of Config.Input.
const (
	// InputText writes the message's text parts to stdin, joined by "\n"
	// (no newline is added after the last one); other parts are skipped.
	InputText = "text"
	// InputJSON writes the whole message as one A2A 1.0 JSON Message
	// object followed by "\n" (see the package documentation for its shape).
	InputJSON = "json"
)

// Config is the configuration of one exec agent: the keys of
// `kind: exec` in `a2abridge serve --config`, decoded with
// yaml.v3. Secrets in it arrive already expanded from ${ENV}.
//
// Durations are written with a unit ("30s", "2m", "0s"): yaml.v3 refuses
// a bare number for a duration, so "no timeout" is written `timeout: 0s`.
type Config struct {
	// Command is the program and its arguments (argv), required. It is
	// run as is, without a shell: write ["sh", "-c", "…"] to get one. A
	// program name without a slash is looked up in the PATH of the
	// command's environment when it has one (see Env and SetEnv), else in
	// the server's PATH; relative PATH entries are skipped. A name with a
	// slash is used as is, relative to Workdir.
	Command []string `yaml:"command"`
	// Input is what the command reads on stdin: "text" (the default:
	// the message's text parts joined by "\n") or "json" (the message as
	// an A2A 1.0 JSON object and a newline). stdin is closed after it.
	Input string `yaml:"input"`
	// Timeout bounds each run, from the start of the process to its exit;
	// a run that takes longer is stopped (SIGTERM, then SIGKILL after
	// KillGrace) and its task failed with "timed out after …". nil means
	// DefaultTimeout (60s); 0 means no timeout. It bounds as well, on its
	// own, the wait for a free slot (see MaxConcurrency).
	Timeout *time.Duration `yaml:"timeout"`
	// Workdir is the command's working directory (default: the server's).
	// It is checked when a message arrives: a missing one fails the task.
	Workdir string `yaml:"workdir"`
	// Env lists the names of the server's environment variables passed
	// to the command (an allowlist). The command gets these (those that
	// are set) and SetEnv, and nothing else: not even PATH, HOME or LANG
	// unless listed. Most commands want at least PATH.
	Env []string `yaml:"env"`
	// SetEnv holds extra variables for the command; they override the
	// server's values of variables listed in Env.
	SetEnv map[string]string `yaml:"set_env"`
	// KillGrace is the time between SIGTERM and SIGKILL when a run is
	// stopped (cancel, timeout, max_output, shutdown) and when processes
	// the command left in its process group are cleaned up after it
	// exits. nil means DefaultKillGrace (5s); 0 sends SIGKILL at once.
	KillGrace *time.Duration `yaml:"kill_grace"`
	// MaxOutput is the number of stdout bytes kept per run (0 means
	// DefaultMaxOutput, 64 MiB). Once a command writes more, the bytes up
	// to the limit have been sent, the rest is discarded, the command is
	// stopped and the task failed with a reason naming max_output.
	MaxOutput int64 `yaml:"max_output"`
	// MaxConcurrency bounds the commands the agent runs at once, for all
	// its tasks together (0 means DefaultMaxConcurrency, 4; otherwise at
	// least 1). A message that arrives when they all run waits for one
	// to end, its task working with a status message that says so; the
	// wait ends with tasks/cancel (the task is canceled and the command
	// never starts) or after Timeout (the task fails with a reason
	// naming max_concurrency). A slot is freed once the command has
	// exited and been reaped, and its output read.
	MaxConcurrency int `yaml:"max_concurrency"`

	// Logger receives the commands' stderr, line by line, and the
	// agent's own diagnostics (default: slog.Default()). Give it the
	// agent's name, e.g. logger.With("agent", name). Not a YAML key.
	Logger *slog.Logger `yaml:"-"`
}

// Validate reports every problem of c, each as an error naming its key
// (e.g. "command: required"), joined with errors.Join; nil when c is
// usable. It checks the configuration only: whether the program and the
// working directory exist is found out when a message arrives.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Command) == 0 {
		add("command: required (the program and its arguments, e.g. [cat])")
	} else if c.Command[0] == "" {
		add("command: empty program name")
	}
	for i, a := range c.Command {
		if strings.IndexByte(a, 0) >= 0 {
			add("command[%d]: contains a NUL byte", i)
		}
	}
	switch c.Input {
	case "", InputText, InputJSON:
	default:
		add("input: must be %q or %q, not %q", InputText, InputJSON, c.Input)
	}
	if c.Timeout != nil && *c.Timeout < 0 {
		add("timeout: must be >= 0 (0s: no timeout)")
	}
	if c.KillGrace != nil && *c.KillGrace < 0 {
		add("kill_grace: must be >= 0 (0s: SIGKILL at once)")
	}
	if c.MaxOutput < 0 {
		add("max_output: must be >= 0 (0: the default, %d bytes)", DefaultMaxOutput)
	}
	if c.MaxConcurrency < 0 {
		add("max_concurrency: must be >= 1 (0: the default, %d)", DefaultMaxConcurrency)
	}
	if strings.IndexByte(c.Workdir, 0) >= 0 {
		add("workdir: contains a NUL byte")
	}
	for i, name := range c.Env {
		if !validName(name) {
			add("env[%d]: %q is not an environment variable name", i, name)
		}
	}
	for _, name := range sortedKeys(c.SetEnv) {
		if !validName(name) {
			add("set_env: %q is not an environment variable name", name)
		} else if strings.IndexByte(c.SetEnv[name], 0) >= 0 {
			add("set_env.%s: value contains a NUL byte", name)
		}
	}
	return errors.Join(errs...)
}

// validName reports whether s can name an environment variable: not
// empty, without '=' or NUL.
func validName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "=\x00")
}

// settings are a Config's values with the defaults applied.
type settings struct {
	argv      []string
	json      bool
	timeout   time.Duration // 0: none
	workdir   string
	env       []string
	setEnv    map[string]string
	killGrace time.Duration
	maxOutput int64
	maxConc   int
	log       *slog.Logger
}

func (c Config) settings() settings {
	s := settings{
		argv:      append([]string(nil), c.Command...),
		json:      c.Input == InputJSON,
		timeout:   DefaultTimeout,
		workdir:   c.Workdir,
		env:       append([]string(nil), c.Env...),
		setEnv:    make(map[string]string, len(c.SetEnv)),
		killGrace: DefaultKillGrace,
		maxOutput: c.MaxOutput,
		maxConc:   c.MaxConcurrency,
		log:       c.Logger,
	}
	for k, v := range c.SetEnv {
		s.setEnv[k] = v
	}
	if c.Timeout != nil {
		s.timeout = *c.Timeout
	}
	if c.KillGrace != nil {
		s.killGrace = *c.KillGrace
	}
	if s.maxOutput == 0 {
		s.maxOutput = DefaultMaxOutput
	}
	if s.maxConc == 0 {
		s.maxConc = DefaultMaxConcurrency
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// environ returns the command's environment: the variables of s.env
// that lookup finds, then s.setEnv, in a stable order.
func (s *settings) environ(lookup func(string) (string, bool)) []string {
	env := []string{} // not nil: os/exec would pass the server's environment
	seen := map[string]bool{}
	for _, name := range s.env {
		if _, set := s.setEnv[name]; set || seen[name] {
			continue
		}
		if v, ok := lookup(name); ok {
			seen[name] = true
			env = append(env, name+"="+v)
		}
	}
	for _, name := range sortedKeys(s.setEnv) {
		env = append(env, name+"="+s.setEnv[name])
	}
	return env
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
