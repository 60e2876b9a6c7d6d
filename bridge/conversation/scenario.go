package conversation

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// Turn policies (Rules.TurnPolicy).
const (
	// PolicyRoundRobin gives the turn to each participant in the order of
	// Scenario.Agents, cyclically, after the one who spoke last.
	PolicyRoundRobin = "round-robin"
	// PolicyModerator gives the turn to the moderator after every other
	// participant's turn; the moderator's answer names who speaks next
	// (see the package doc, "Moderator").
	PolicyModerator = "moderator"
)

// What a participant's failure does (Rules.OnParticipantFailure).
const (
	// FailConversation fails the conversation's task with the reason.
	FailConversation = "fail"
	// SkipParticipant records the failure in the history and goes on
	// with the next participant.
	SkipParticipant = "skip"
)

// Limits of a scenario.
const (
	// DefaultMaxTurns is Rules.MaxTurns when it is 0.
	DefaultMaxTurns = 20
	// MaxTurnsLimit is the largest Rules.MaxTurns.
	MaxTurnsLimit = 1000
	// DefaultTurnTimeout is Rules.TurnTimeout when it is empty.
	DefaultTurnTimeout = 2 * time.Minute
	// MaxTurnTimeout is the longest Rules.TurnTimeout.
	MaxTurnTimeout = time.Hour
	// MaxParticipants is the most entries of Scenario.Agents.
	MaxParticipants = 32
	// DefaultMaxTurnBytes is Rules.MaxTurnBytes when it is 0: 64 KiB.
	DefaultMaxTurnBytes = 64 << 10
	// MaxTurnBytesLimit is the largest Rules.MaxTurnBytes: 16 MiB.
	MaxTurnBytesLimit = 16 << 20
	// DefaultMaxTotalBytes is Rules.MaxTotalBytes when it is 0: 1 MiB.
	DefaultMaxTotalBytes = 1 << 20
	// MaxTotalBytesLimit is the largest Rules.MaxTotalBytes: 64 MiB.
	MaxTotalBytesLimit = 64 << 20
	// DefaultMaxConfigBytes is the default bound of the JSON a config64
	// holds (DecodeConfig64's maxBytes when it is <= 0): 16 KiB.
	DefaultMaxConfigBytes = 16 << 10
)

// Scenario describes a conversation (the conversation bridge's
// ConversationMeta): who takes part, who the A2A client speaks as, and the
// rules. Its JSON form (the fields' json names, case-sensitive, unknown
// members refused) is what a config64 carries and what a scenario file
// holds (in JSON or YAML).
type Scenario struct {
	// Title names the conversation; it is the name of the scenario's
	// Agent Card. Required, at most 200 bytes.
	Title string `json:"title"`
	// Description is the card's description (at most 4000 bytes).
	Description string `json:"description,omitempty"`
	// ScenarioID is an identifier of the author's choosing, shown in the
	// card's skill and in diag (at most 200 bytes).
	ScenarioID string `json:"scenarioId,omitempty"`
	// Agents are the participants, 2 to MaxParticipants of them, exactly
	// one of them external (the A2A client).
	Agents []Participant `json:"agents"`
	// StartingAgentID is the id of the participant the A2A client speaks
	// as: the external one. Its message starts the conversation.
	StartingAgentID string `json:"startingAgentId"`
	// Rules are the turn policy, the limits and what a failure does.
	Rules Rules `json:"rules,omitzero"`
}

// Participant is one entry of Scenario.Agents: an internal participant
// (an agent of Kind, built from Config by the Factory) or the external
// one (External: the A2A client).
type Participant struct {
	// ID identifies the participant within the scenario: 1 to 64 of
	// letters, digits, '-', '_' and '.'; unique.
	ID string `json:"id"`
	// Role is what the participant stands for ("buyer", "critic"),
	// shown in the card's skill; at most 200 bytes.
	Role string `json:"role,omitempty"`
	// DisplayName is the name shown for its turns (default: ID); at most
	// 100 bytes.
	DisplayName string `json:"displayName,omitempty"`
	// AvatarURL is an image URL for user interfaces (at most 2048 bytes).
	AvatarURL string `json:"avatarUrl,omitempty"`
	// Kind is the kind of agent an internal participant is (for the
	// a2abridge server: openai, http, a2a, exec, echo, chat, …); empty
	// for the external participant.
	Kind string `json:"kind,omitempty"`
	// Config holds the kind's configuration keys (for the a2abridge
	// server, the keys of an agents entry of that kind, such as
	// {"base_url": …, "model": …} for openai); none for the external
	// participant.
	Config map[string]any `json:"config,omitempty"`
	// External marks the participant the A2A client speaks as.
	External bool `json:"external,omitempty"`
}

// Name is the participant's display name, else its id.
func (p Participant) Name() string {
	if p.DisplayName != "" {
		return p.DisplayName
	}
	return p.ID
}

// Rules are a scenario's rules. The zero value is round-robin,
// DefaultMaxTurns, DefaultTurnTimeout, and a failure fails the
// conversation.
type Rules struct {
	// TurnPolicy is PolicyRoundRobin (the default) or PolicyModerator.
	TurnPolicy string `json:"turnPolicy,omitempty"`
	// ModeratorID is the moderator's participant id; required with
	// PolicyModerator, refused without it. The moderator may be the
	// external participant.
	ModeratorID string `json:"moderatorId,omitempty"`
	// MaxTurns ends the conversation (completed) after that many turns,
	// the client's included; 0: DefaultMaxTurns; at most MaxTurnsLimit.
	MaxTurns int `json:"maxTurns,omitempty"`
	// TurnTimeout bounds each internal participant's turn, as a Go
	// duration ("90s", "2m"); empty: DefaultTurnTimeout; at most
	// MaxTurnTimeout. A turn that takes longer is that participant's
	// failure.
	TurnTimeout string `json:"turnTimeout,omitempty"`
	// OnParticipantFailure is FailConversation (the default) or
	// SkipParticipant.
	OnParticipantFailure string `json:"onParticipantFailure,omitempty"`
	// MaxTurnBytes bounds one turn: the bytes of its parts (text,
	// files' bytes or URLs, data as JSON) and metadata. A client's turn
	// over it fails the conversation; an internal participant's is that
	// participant's failure (OnParticipantFailure), and the participant
	// is stopped once its output passes twice the limit. 0:
	// DefaultMaxTurnBytes (64 KiB); at most MaxTurnBytesLimit.
	MaxTurnBytes int64 `json:"maxTurnBytes,omitempty"`
	// MaxTotalBytes bounds the turns of a conversation together, counted
	// as MaxTurnBytes counts one: a turn that would pass it is not
	// stored or passed on, and the conversation fails with a reason
	// naming the limit. Every participant sees the turns since it last
	// spoke, so this bounds what each one reads too. 0:
	// DefaultMaxTotalBytes (1 MiB); at most MaxTotalBytesLimit.
	MaxTotalBytes int64 `json:"maxTotalBytes,omitempty"`
}

// TurnBytes is MaxTurnBytes, DefaultMaxTurnBytes when 0.
func (r Rules) TurnBytes() int64 {
	if r.MaxTurnBytes <= 0 {
		return DefaultMaxTurnBytes
	}
	return r.MaxTurnBytes
}

// TotalBytes is MaxTotalBytes, DefaultMaxTotalBytes when 0.
func (r Rules) TotalBytes() int64 {
	if r.MaxTotalBytes <= 0 {
		return DefaultMaxTotalBytes
	}
	return r.MaxTotalBytes
}

// Limits are ceilings over a scenario's rules: a server that hosts
// scenarios written by its callers (ad-hoc scenarios) sets them below the
// package's limits. A zero field sets no ceiling of its own.
type Limits struct {
	// MaxTurns is the most Rules.MaxTurns; a scenario without maxTurns
	// gets the smaller of DefaultMaxTurns and this.
	MaxTurns int
	// MaxTurnBytes is the most Rules.MaxTurnBytes, likewise.
	MaxTurnBytes int64
	// MaxTotalBytes is the most Rules.MaxTotalBytes, likewise.
	MaxTotalBytes int64
}

// check reports (a *FieldError) a rule of r set above l.
func (l Limits) check(r Rules) error {
	if l.MaxTurns > 0 && r.MaxTurns > l.MaxTurns {
		return fieldErr("rules.maxTurns", "%d: over this server's limit of %d", r.MaxTurns, l.MaxTurns)
	}
	if l.MaxTurnBytes > 0 && r.MaxTurnBytes > l.MaxTurnBytes {
		return fieldErr("rules.maxTurnBytes", "%d: over this server's limit of %d bytes", r.MaxTurnBytes, l.MaxTurnBytes)
	}
	if l.MaxTotalBytes > 0 && r.MaxTotalBytes > l.MaxTotalBytes {
		return fieldErr("rules.maxTotalBytes", "%d: over this server's limit of %d bytes", r.MaxTotalBytes, l.MaxTotalBytes)
	}
	return nil
}

// apply returns r with l's ceilings applied to its effective values.
func (l Limits) apply(r Rules) Rules {
	r.MaxTurns = r.Turns()
	if l.MaxTurns > 0 {
		r.MaxTurns = min(r.MaxTurns, l.MaxTurns)
	}
	r.MaxTurnBytes = r.TurnBytes()
	if l.MaxTurnBytes > 0 {
		r.MaxTurnBytes = min(r.MaxTurnBytes, l.MaxTurnBytes)
	}
	r.MaxTotalBytes = r.TotalBytes()
	if l.MaxTotalBytes > 0 {
		r.MaxTotalBytes = min(r.MaxTotalBytes, l.MaxTotalBytes)
	}
	return r
}

// Timeout is TurnTimeout as a duration (DefaultTurnTimeout when empty or
// invalid; Validate reports an invalid one).
func (r Rules) Timeout() time.Duration {
	d, err := time.ParseDuration(r.TurnTimeout)
	if err != nil || d <= 0 {
		return DefaultTurnTimeout
	}
	return d
}

// Turns is MaxTurns, DefaultMaxTurns when 0.
func (r Rules) Turns() int {
	if r.MaxTurns <= 0 {
		return DefaultMaxTurns
	}
	return r.MaxTurns
}

// FieldError is a scenario error that names its field as a path into the
// scenario's JSON ("agents[2].id", "startingAgentId", "config64").
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ParseJSON decodes a scenario from its JSON form, strictly: unknown or
// duplicate members, members of another case and trailing data are
// errors, as are values of the wrong type (a *FieldError naming the
// member's JSON pointer path); then Validate.
func ParseJSON(b []byte) (*Scenario, error) {
	var s Scenario
	if err := json.Unmarshal(b, &s, json.RejectUnknownMembers(true)); err != nil {
		var se *json.SemanticError
		if errors.As(err, &se) && se.JSONPointer != "" {
			return nil, fieldErr(pointerField(string(se.JSONPointer)), "%s", strings.TrimPrefix(se.Error(), "json: "))
		}
		return nil, fieldErr("scenario", "not a scenario JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// pointerField turns a JSON pointer (/agents/2/id) into a field path
// (agents[2].id).
func pointerField(p string) string {
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// JSON returns the scenario's JSON form (what ParseJSON reads).
func (s *Scenario) JSON() []byte {
	b, err := json.Marshal(s, json.Deterministic(true))
	if err != nil {
		return nil // a map value that is not JSON: Validate refuses it
	}
	return b
}

// EncodeConfig64 returns the config64 of s: the base64url (RFC 4648 §5,
// no padding) of its JSON form.
func EncodeConfig64(s *Scenario) string {
	return base64.RawURLEncoding.EncodeToString(s.JSON())
}

// DecodeConfig64 decodes a config64 (base64url of a scenario's JSON;
// padded or not) into a validated scenario. maxBytes bounds the JSON
// (<= 0: DefaultMaxConfigBytes): a longer config64 is refused before it is
// decoded. Errors are *FieldError: "config64" for the size and the
// encoding, else the scenario's field.
func DecodeConfig64(s string, maxBytes int) (*Scenario, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxConfigBytes
	}
	if s == "" {
		return nil, fieldErr("config64", "empty: want the base64url of a scenario's JSON")
	}
	if len(s) > base64.URLEncoding.EncodedLen(maxBytes) {
		return nil, fieldErr("config64", "%d characters: over the limit of %d bytes of scenario JSON", len(s), maxBytes)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fieldErr("config64", "not base64url (RFC 4648 §5): %v", err)
	}
	if len(b) > maxBytes {
		return nil, fieldErr("config64", "%d bytes of JSON: over the limit of %d", len(b), maxBytes)
	}
	return ParseJSON(b)
}

// Validate checks s: the error (a *FieldError) names the first field
// that is wrong, as "agents[2].id: duplicate \"bob\"" or
// "startingAgentId: \"x\" is not among the agents".
func (s *Scenario) Validate() error {
	if strings.TrimSpace(s.Title) == "" {
		return fieldErr("title", "required")
	}
	if err := maxLen("title", s.Title, 200); err != nil {
		return err
	}
	if err := maxLen("description", s.Description, 4000); err != nil {
		return err
	}
	if err := maxLen("scenarioId", s.ScenarioID, 200); err != nil {
		return err
	}
	if len(s.Agents) < 2 {
		return fieldErr("agents", "want 2 to %d participants, got %d", MaxParticipants, len(s.Agents))
	}
	if len(s.Agents) > MaxParticipants {
		return fieldErr("agents", "want at most %d participants, got %d", MaxParticipants, len(s.Agents))
	}
	seen := map[string]int{}
	external := -1
	for i, p := range s.Agents {
		f := fmt.Sprintf("agents[%d]", i)
		if p.ID == "" {
			return fieldErr(f+".id", "required")
		}
		if !validID(p.ID) {
			return fieldErr(f+".id", "%q: use 1 to 64 letters, digits, '-', '_' or '.'", p.ID)
		}
		if j, dup := seen[p.ID]; dup {
			return fieldErr(f+".id", "duplicate %q (also agents[%d])", p.ID, j)
		}
		seen[p.ID] = i
		for _, c := range []struct {
			k, v string
			n    int
		}{{"role", p.Role, 200}, {"displayName", p.DisplayName, 100}, {"avatarUrl", p.AvatarURL, 2048}} {
			if err := maxLen(f+"."+c.k, c.v, c.n); err != nil {
				return err
			}
		}
		if p.External {
			if external >= 0 {
				return fieldErr(f+".external", "only one participant can be external (agents[%d] is)", external)
			}
			external = i
			if p.Kind != "" {
				return fieldErr(f+".kind", "an external participant (the A2A client) has no kind")
			}
			if len(p.Config) > 0 {
				return fieldErr(f+".config", "an external participant (the A2A client) has no config")
			}
			continue
		}
		if p.Kind == "" {
			return fieldErr(f+".kind", "required for an internal participant (or set external: true)")
		}
		if !validID(p.Kind) {
			return fieldErr(f+".kind", "unknown kind %q", p.Kind)
		}
		if _, err := json.Marshal(p.Config); err != nil {
			return fieldErr(f+".config", "not JSON: %v", err)
		}
	}
	if external < 0 {
		return fieldErr("agents", "one participant must be external: true (the A2A client)")
	}
	if s.StartingAgentID == "" {
		return fieldErr("startingAgentId", "required (the id of the external participant)")
	}
	i, ok := seen[s.StartingAgentID]
	if !ok {
		return fieldErr("startingAgentId", "%q is not among the agents", s.StartingAgentID)
	}
	if i != external {
		return fieldErr("startingAgentId", "%q is internal: the client speaks as the external participant %q", s.StartingAgentID, s.Agents[external].ID)
	}
	r := s.Rules
	switch r.TurnPolicy {
	case "", PolicyRoundRobin:
		if r.ModeratorID != "" {
			return fieldErr("rules.moderatorId", "only with turnPolicy %q", PolicyModerator)
		}
	case PolicyModerator:
		if r.ModeratorID == "" {
			return fieldErr("rules.moderatorId", "required with turnPolicy %q", PolicyModerator)
		}
		if _, ok := seen[r.ModeratorID]; !ok {
			return fieldErr("rules.moderatorId", "%q is not among the agents", r.ModeratorID)
		}
	default:
		return fieldErr("rules.turnPolicy", "unknown policy %q (want %q or %q)", r.TurnPolicy, PolicyRoundRobin, PolicyModerator)
	}
	if r.MaxTurns < 0 || r.MaxTurns > MaxTurnsLimit {
		return fieldErr("rules.maxTurns", "want 1 to %d (0: %d), got %d", MaxTurnsLimit, DefaultMaxTurns, r.MaxTurns)
	}
	if r.TurnTimeout != "" {
		d, err := time.ParseDuration(r.TurnTimeout)
		if err != nil || d <= 0 || d > MaxTurnTimeout {
			return fieldErr("rules.turnTimeout", "want a duration such as 90s or 2m, at most %s", MaxTurnTimeout)
		}
	}
	switch r.OnParticipantFailure {
	case "", FailConversation, SkipParticipant:
	default:
		return fieldErr("rules.onParticipantFailure", "want %q or %q, got %q", FailConversation, SkipParticipant, r.OnParticipantFailure)
	}
	if r.MaxTurnBytes < 0 || r.MaxTurnBytes > MaxTurnBytesLimit {
		return fieldErr("rules.maxTurnBytes", "want 1 to %d (0: %d), got %d", MaxTurnBytesLimit, DefaultMaxTurnBytes, r.MaxTurnBytes)
	}
	if r.MaxTotalBytes < 0 || r.MaxTotalBytes > MaxTotalBytesLimit {
		return fieldErr("rules.maxTotalBytes", "want 1 to %d (0: %d), got %d", MaxTotalBytesLimit, DefaultMaxTotalBytes, r.MaxTotalBytes)
	}
	if r.MaxTotalBytes > 0 && r.MaxTurnBytes > r.MaxTotalBytes {
		return fieldErr("rules.maxTurnBytes", "%d: more than rules.maxTotalBytes (%d)", r.MaxTurnBytes, r.MaxTotalBytes)
	}
	return nil
}

func maxLen(field, v string, n int) error {
	if len(v) > n {
		return fieldErr(field, "%d bytes: at most %d", len(v), n)
	}
	return nil
}

func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// External returns the external participant (Validate makes sure there
// is one).
func (s *Scenario) External() Participant {
	for _, p := range s.Agents {
		if p.External {
			return p
		}
	}
	return Participant{}
}

// participant returns the participant with id.
func (s *Scenario) participant(id string) (Participant, bool) {
	for _, p := range s.Agents {
		if p.ID == id {
			return p, true
		}
	}
	return Participant{}, false
}

// Allow is what an ad-hoc scenario (one that comes in a URL, from anyone
// who can reach the server) may use: an internal participant's kind must
// be listed in Kinds, and every URL in its config in URLs. The zero value
// allows no internal participant.
type Allow struct {
	// Kinds are the allowed participant kinds.
	Kinds []string
	// URLs are the allowed URL prefixes, each an absolute http(s) URL
	// ("https://api.openai.com/v1", "http://127.0.0.1:9000"): a URL in a
	// config is allowed when its scheme and host (and port) are one's and
	// its path is the prefix's path or below it ("/v1" allows "/v1" and
	// "/v1/x", not "/v10"). Queries, fragments and user info in a prefix
	// are not allowed; Validate reports them.
	URLs []string
	// Limits are the ceilings of the scenario's rules: Check refuses a
	// scenario whose rules ask for more (pass the same to
	// Options.Limits, which applies them to rules left at their
	// defaults).
	Limits Limits
}

// Validate reports the first entry of a.URLs that is not an
// absolute http or https URL without user info, query or fragment.
func (a Allow) Validate() error {
	for i, u := range a.URLs {
		if _, err := parsePrefix(u); err != nil {
			return fmt.Errorf("urls[%d]: %v", i, err)
		}
	}
	return nil
}

func parsePrefix(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want an absolute http or https URL", s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: no user info, query or fragment", s)
	}
	return u, nil
}

// Check reports (a *FieldError) a rule of s over a.Limits, or the first
// internal participant of s whose kind a does not allow, or whose config
// holds a URL that a does not allow. A URL is any string value (at any depth of the config) that
// contains "://", or the value of any key whose name ends in "url" or
// "URL"; each must be an http(s) URL under one of a.URLs.
func (a Allow) Check(s *Scenario) error {
	if err := a.Limits.check(s.Rules); err != nil {
		return err
	}
	for i, p := range s.Agents {
		if p.External {
			continue
		}
		f := fmt.Sprintf("agents[%d]", i)
		if !slices.Contains(a.Kinds, p.Kind) {
			allowed := "none"
			if len(a.Kinds) > 0 {
				allowed = strings.Join(a.Kinds, ", ")
			}
			return fieldErr(f+".kind", "%q is not allowed in an ad-hoc scenario on this server (allowed: %s)", p.Kind, allowed)
		}
		if err := a.checkValue(f+".config", "", p.Config); err != nil {
			return err
		}
	}
	return nil
}

func (a Allow) checkValue(field, key string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			if err := a.checkValue(field+"."+k, k, x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := a.checkValue(fmt.Sprintf("%s[%d]", field, i), key, e); err != nil {
				return err
			}
		}
	case string:
		urlKey := strings.HasSuffix(strings.ToLower(key), "url")
		if (urlKey || strings.Contains(x, "://")) && !a.allowsURL(x) {
			return fieldErr(field, "this URL is not allowed in an ad-hoc scenario on this server (the operator's allowlist: conversations.urls)")
		}
	}
	return nil
}

// CheckURL refuses (an error naming u's scheme, host and path) a URL that
// is not under one of a.URLs, the rule Check applies to the URLs of a
// config. Check sees only the config: the a2abridge server also gives
// CheckURL to the participants of an ad-hoc scenario
// (remote.Config.CheckURL, openai.Config.CheckURL), so that every
// request they send (a redirect, the interface URL of a fetched Agent
// Card) stays under the allowlist.
func (a Allow) CheckURL(u *url.URL) error {
	if u != nil && a.allowsURL(u.String()) {
		return nil
	}
	shown := "(no URL)"
	if u != nil {
		v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
		shown = v.String()
	}
	return fmt.Errorf("%s is not under the URLs an ad-hoc scenario may use on this server (the operator's allowlist: conversations.urls)", shown)
}

// plainPath reports whether an escaped URL path can be compared with a
// prefix as it is: no segment that a server may read as a step up or
// aside ("." or "..", also with ";parameters" as servlet containers read
// "..;"), no escaped dot, slash or backslash, no backslash.
func plainPath(path string) bool {
	low := strings.ToLower(path)
	if strings.Contains(low, "%2e") || strings.Contains(low, "%2f") || strings.Contains(low, "%5c") || strings.Contains(path, "\\") {
		return false
	}
	for _, seg := range strings.Split(path, "/") {
		seg, _, _ = strings.Cut(seg, ";")
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// allowsURL reports whether raw is under one of a.URLs.
func (a Allow) allowsURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	path := u.EscapedPath()
	if !plainPath(path) {
		return false
	}
	for _, s := range a.URLs {
		p, err := parsePrefix(s)
		if err != nil || p.Scheme != u.Scheme || !strings.EqualFold(p.Host, u.Host) {
			continue
		}
		pp := strings.TrimSuffix(p.EscapedPath(), "/")
		if pp == "" || path == pp || strings.HasPrefix(path, pp+"/") {
			return true
		}
	}
	return false
}
