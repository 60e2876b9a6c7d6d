package check

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Report is the outcome of a run: what was checked and every result with
// its evidence. It is what --json prints.
type Report struct {
	Checker  string `json:"checker"`
	Protocol string `json:"protocol"` // the A2A version checked
	Target   string `json:"target"`   // the URL given
	CardURL  string `json:"cardUrl,omitempty"`
	Endpoint string `json:"endpoint,omitempty"` // the JSON-RPC URL probed

	Agent            string `json:"agent,omitempty"`
	AgentVersion     string `json:"agentVersion,omitempty"`
	DeclaredProtocol string `json:"declaredProtocol,omitempty"` // the card's protocolVersion

	Started    time.Time     `json:"started"`
	Duration   time.Duration `json:"-"`
	DurationMS int64         `json:"durationMs"`

	// Score is the weighted share (0–100) of applicable checks that
	// passed: MUST counts 3, SHOULD 2, MAY 1; skipped and not applicable
	// checks do not count.
	Score      float64           `json:"score"`
	Counts     Counts            `json:"counts"`
	Failed     map[Level]int     `json:"failedByLevel"`
	Categories []CategorySummary `json:"categories"`
	// Interfaces are the interfaces the card declares, each with the
	// score of its checks when it was checked (the Agent Card checks of
	// its version count for each binding).
	Interfaces []InterfaceReport `json:"interfaces,omitempty"`
	Results    []CheckResult     `json:"results"`
}

// InterfaceReport is one interface of the card in a report: whether it
// was checked and, if so, its score (as Report.Score), counts and
// failures by level.
type InterfaceReport struct {
	Interface
	Name       string        `json:"name"` // "A2A 1.0 HTTP+JSON"
	Checked    bool          `json:"checked"`
	NotChecked string        `json:"notChecked,omitempty"` // why not
	Score      float64       `json:"score"`
	Counts     Counts        `json:"counts"`
	Failed     map[Level]int `json:"failedByLevel,omitempty"`
}

// Counts counts results by status.
type Counts struct {
	Total         int `json:"total"`
	Pass          int `json:"pass"`
	Fail          int `json:"fail"`
	Skip          int `json:"skip"`
	NotApplicable int `json:"notApplicable"`
}

func (c *Counts) add(s Status) {
	c.Total++
	switch s {
	case Pass:
		c.Pass++
	case Fail:
		c.Fail++
	case Skip:
		c.Skip++
	case NotApplicable:
		c.NotApplicable++
	}
}

// CategorySummary counts one category's results.
type CategorySummary struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	Counts
}

// CheckResult is one check's result in a report.
type CheckResult struct {
	ID             string        `json:"id"`
	Category       string        `json:"category"`
	Version        string        `json:"version,omitempty"` // "0.3", "1.0"
	Binding        string        `json:"binding,omitempty"` // "jsonrpc", "rest", "" (any: the card)
	Section        string        `json:"section"`
	Level          Level         `json:"level"`
	Title          string        `json:"title"`
	Requirement    string        `json:"requirement"`
	Recommendation string        `json:"recommendation"`
	Status         Status        `json:"status"`
	Message        string        `json:"message"`
	Duration       time.Duration `json:"-"`
	DurationMS     int64         `json:"durationMs"`
	Evidence       []Evidence    `json:"evidence,omitempty"`
}

// Evidence is one exchange, as kept in a report (bodies shortened).
type Evidence struct {
	Seq        int               `json:"seq"`
	Request    EvidenceRequest   `json:"request"`
	Response   *EvidenceResponse `json:"response,omitempty"`
	Error      string            `json:"error,omitempty"`
	DurationMS int64             `json:"durationMs"`
}

// EvidenceRequest is the request of an exchange.
type EvidenceRequest struct {
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	RPCMethod string            `json:"rpcMethod,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Body      string            `json:"body,omitempty"`
}

// EvidenceResponse is the response of an exchange.
type EvidenceResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Events  []EvidenceEvent   `json:"events,omitempty"`
	// Stream notes how a stream ended ("closed by the server", …).
	Stream string `json:"stream,omitempty"`
}

// EvidenceEvent is one SSE event.
type EvidenceEvent struct {
	ID    string `json:"id,omitempty"`
	Event string `json:"event,omitempty"`
	Data  string `json:"data"`
	AtMS  int64  `json:"atMs"`
}

// Limits of evidence in reports.
const (
	maxEvidenceBody   = 1500
	maxEvidenceEvents = 12
	maxEventData      = 600
)

func newCheckResult(c *Check, r Result, took time.Duration) CheckResult {
	cr := CheckResult{
		ID: c.ID, Category: c.Category, Version: c.Version, Binding: c.Binding, Section: c.Section, Level: c.Level, Title: c.Title,
		Requirement: c.Requirement, Recommendation: c.Recommendation,
		Status: r.Status, Message: r.Message, Duration: took, DurationMS: took.Milliseconds(),
	}
	for _, e := range r.Evidence {
		cr.Evidence = append(cr.Evidence, evidenceOf(e))
	}
	return cr
}

func evidenceOf(e *Exchange) Evidence {
	ev := Evidence{Seq: e.Seq, Error: e.Err, DurationMS: e.Duration.Milliseconds(),
		Request: EvidenceRequest{Method: e.Method, URL: e.URL, RPCMethod: e.RPCMethod, Headers: flat(e.ReqHeader), Body: excerpt(e.ReqBody, maxEvidenceBody)}}
	if e.Status == 0 {
		return ev
	}
	resp := &EvidenceResponse{Status: e.Status, Headers: flat(e.RespHeader)}
	if e.Stream && len(e.Events) > 0 {
		for i, x := range e.Events {
			if i == maxEvidenceEvents {
				resp.Events = append(resp.Events, EvidenceEvent{Data: fmt.Sprintf("… %d more events", len(e.Events)-i)})
				break
			}
			resp.Events = append(resp.Events, EvidenceEvent{ID: x.ID, Event: x.Event, Data: excerpt(x.Data, maxEventData), AtMS: x.At.Milliseconds()})
		}
	} else {
		resp.Body = excerpt(e.RespBody, maxEvidenceBody)
		if e.Truncated {
			resp.Body += " … (truncated)"
		}
	}
	if e.Stream {
		switch {
		case e.Closed && e.FinalSeen:
			resp.Stream = fmt.Sprintf("closed by the server %s after the final event", roundDur(e.CloseDelay))
		case e.Closed:
			resp.Stream = "closed by the server"
		case e.FinalSeen:
			resp.Stream = "still open after the final event; closed by the checker"
		default:
			resp.Stream = "closed by the checker"
		}
	}
	ev.Response = resp
	return ev
}

func flat(h map[string][]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// excerpt returns b as text, shortened to n bytes (on a UTF-8 boundary).
func excerpt(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// summarize fills the counts, categories, failures by level and score.
func (r *Report) summarize() {
	r.DurationMS = r.Duration.Milliseconds()
	r.Counts = Counts{}
	r.Failed = map[Level]int{Must: 0, Should: 0, May: 0}
	r.Categories = nil
	byCat := map[string]*CategorySummary{}
	var got, total int
	for i := range r.Results {
		cr := &r.Results[i]
		if cr.DurationMS == 0 {
			cr.DurationMS = cr.Duration.Milliseconds()
		}
		r.Counts.add(cr.Status)
		cs := byCat[cr.Category]
		if cs == nil {
			cs = &CategorySummary{Name: cr.Category, Title: CategoryTitle(cr.Category)}
			byCat[cr.Category] = cs
		}
		cs.add(cr.Status)
		got, total = tally(cr, got, total, r.Failed)
	}
	for _, c := range Categories {
		if cs := byCat[c.Name]; cs != nil {
			r.Categories = append(r.Categories, *cs)
			delete(byCat, c.Name)
		}
	}
	rest := make([]string, 0, len(byCat))
	for name := range byCat {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		r.Categories = append(r.Categories, *byCat[name])
	}
	r.Score = score(got, total)
	for i := range r.Interfaces {
		r.Interfaces[i].summarize(r.Results)
	}
}

// tally adds a result to a score's points (got of total) and failures.
func tally(cr *CheckResult, got, total int, failed map[Level]int) (int, int) {
	w := cr.Level.Weight()
	switch cr.Status {
	case Pass:
		got += w
		total += w
	case Fail:
		total += w
		failed[cr.Level]++
	}
	return got, total
}

// score is got of total as a percentage with one decimal (0 for none).
func score(got, total int) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(1000*float64(got)/float64(total)) / 10
}

// summarize scores the interface: the results of its version and binding,
// and those of its version's card checks.
func (ir *InterfaceReport) summarize(results []CheckResult) {
	ir.Counts, ir.Score, ir.Failed = Counts{}, 0, nil
	if !ir.Checked {
		return
	}
	ir.Failed = map[Level]int{Must: 0, Should: 0, May: 0}
	var got, total int
	for i := range results {
		cr := &results[i]
		if cr.Version != ir.Version || (cr.Binding != "" && cr.Binding != ir.Binding) {
			continue
		}
		ir.Counts.add(cr.Status)
		got, total = tally(cr, got, total, ir.Failed)
	}
	ir.Score = score(got, total)
}

// MustFailures returns the number of failed MUST checks.
func (r *Report) MustFailures() int { return r.Failed[Must] }

// Result returns the result of the check id (nil if it did not run).
func (r *Report) Result(id string) *CheckResult {
	for i := range r.Results {
		if r.Results[i].ID == id {
			return &r.Results[i]
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r, json.Deterministic(true), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// verdict is the one-line conclusion.
func (r *Report) verdict() string {
	switch {
	case r.Failed[Must] > 0:
		return fmt.Sprintf("NOT CONFORMANT: %d MUST requirement(s) fail.", r.Failed[Must])
	case r.Counts.Pass == 0:
		return "NOTHING VERIFIED: no check passed."
	}
	skipped := ""
	if r.Counts.Skip > 0 {
		skipped = fmt.Sprintf(" (%d of %d checks could not be carried out: see the skipped ones)", r.Counts.Skip, r.Counts.Total)
	}
	if r.Failed[Should] > 0 {
		return fmt.Sprintf("Conformant on every MUST that could be checked%s; %d SHOULD recommendation(s) fail.", skipped, r.Failed[Should])
	}
	return "Conformant on every requirement that could be checked" + skipped + "."
}

func (r *Report) agentLine() string {
	if r.Agent == "" {
		return "(no Agent Card)"
	}
	s := r.Agent
	if r.AgentVersion != "" {
		s += " " + r.AgentVersion
	}
	if r.DeclaredProtocol != "" {
		s += fmt.Sprintf(" (declares A2A %s)", r.DeclaredProtocol)
	}
	return s
}

// statusWord is the status as shown to people.
func statusWord(s Status) string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	}
	return "N/A"
}

// ---------------------------------------------------------------- terminal

// WriteText writes the summary for a terminal: a table by category, the
// failures with their evidence, and the skipped checks with their reasons.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A2A %s conformance of %s\n", r.Protocol, r.Target)
	fmt.Fprintf(&b, "  agent     %s\n", printable(r.agentLine()))
	if r.CardURL != "" {
		fmt.Fprintf(&b, "  card      %s\n", printable(r.CardURL))
	}
	if r.Endpoint != "" {
		fmt.Fprintf(&b, "  endpoint  %s (JSON-RPC)\n", printable(r.Endpoint))
	}
	fmt.Fprintf(&b, "  checks    %d in %s\n", r.Counts.Total, roundDur(time.Duration(r.DurationMS)*time.Millisecond))
	r.writeInterfacesText(&b)
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-36s %5s %5s %5s %5s\n", "category", "pass", "fail", "skip", "n/a")
	for _, c := range r.Categories {
		fmt.Fprintf(&b, "%-36s %5d %5d %5d %5d\n", c.Title, c.Pass, c.Fail, c.Skip, c.NotApplicable)
	}
	fmt.Fprintf(&b, "%-36s %5d %5d %5d %5d\n\n", "total", r.Counts.Pass, r.Counts.Fail, r.Counts.Skip, r.Counts.NotApplicable)
	fmt.Fprintf(&b, "score %.1f%% (weighted: MUST 3, SHOULD 2, MAY 1)   failed: %d MUST, %d SHOULD, %d MAY\n",
		r.Score, r.Failed[Must], r.Failed[Should], r.Failed[May])
	fmt.Fprintf(&b, "%s\n", r.verdict())

	var failed, skipped []CheckResult
	for _, cr := range r.Results {
		switch cr.Status {
		case Fail:
			failed = append(failed, cr)
		case Skip:
			skipped = append(skipped, cr)
		}
	}
	sortByLevel(failed)
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\nFAILURES\n")
		for _, cr := range failed {
			fmt.Fprintf(&b, "\n✗ %s  %s  %s  %s\n", cr.ID, cr.Level, cr.Section, cr.Title)
			writeField(&b, "current", cr.Message)
			writeField(&b, "required", cr.Requirement)
			writeField(&b, "fix", cr.Recommendation)
			for _, ev := range cr.Evidence {
				writeEvidenceText(&b, ev)
			}
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\nSKIPPED\n")
		for _, cr := range skipped {
			fmt.Fprintf(&b, "- %s: %s\n", cr.ID, printable(firstLine(cr.Message)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeInterfacesText lists the card's interfaces with their scores.
func (r *Report) writeInterfacesText(b *strings.Builder) {
	if len(r.Interfaces) == 0 {
		return
	}
	fmt.Fprintf(b, "  interfaces (the card's, in its order)\n")
	for _, i := range r.Interfaces {
		fmt.Fprintf(b, "    %-18s %s\n      %s\n", i.Name, printable(i.URL), i.outcome())
	}
}

// outcome is the interface's score and counts, or why it was not checked.
func (i InterfaceReport) outcome() string {
	if !i.Checked {
		return "not checked: " + i.NotChecked
	}
	return fmt.Sprintf("score %.1f%%: %d pass, %d fail (%d MUST), %d skip, %d n/a", i.Score, i.Counts.Pass, i.Counts.Fail, i.Failed[Must], i.Counts.Skip, i.Counts.NotApplicable)
}

func writeField(b *strings.Builder, name, text string) {
	lines := strings.Split(printable(text), "\n")
	fmt.Fprintf(b, "  %-9s %s\n", name+":", lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "  %-9s %s\n", "", l)
	}
}

func writeEvidenceText(b *strings.Builder, ev Evidence) {
	req := ev.Request
	fmt.Fprintf(b, "  → #%d %s %s\n", ev.Seq, req.Method, printable(req.URL))
	for _, k := range sortedKeys(req.Headers) {
		if k == "Accept" || k == "Content-Type" {
			continue
		}
		fmt.Fprintf(b, "      %s: %s\n", k, printable(req.Headers[k]))
	}
	if req.Body != "" {
		fmt.Fprintf(b, "      %s\n", printable(oneLine(req.Body)))
	}
	if ev.Response == nil {
		fmt.Fprintf(b, "  ← %s\n", printable(ev.Error))
		return
	}
	resp := ev.Response
	fmt.Fprintf(b, "  ← HTTP %d  %s\n", resp.Status, printable(resp.Headers["Content-Type"]))
	for _, k := range sortedKeys(resp.Headers) {
		if k == "Content-Type" {
			continue
		}
		fmt.Fprintf(b, "      %s: %s\n", k, printable(resp.Headers[k]))
	}
	if resp.Body != "" {
		fmt.Fprintf(b, "      %s\n", printable(oneLine(resp.Body)))
	}
	for _, e := range resp.Events {
		prefix := ""
		if e.Event != "" {
			prefix += "event:" + e.Event + " "
		}
		if e.ID != "" {
			prefix += "id:" + e.ID + " "
		}
		fmt.Fprintf(b, "      %s%s\n", printable(prefix), printable(oneLine(e.Data)))
	}
	if resp.Stream != "" {
		fmt.Fprintf(b, "      (stream %s)\n", resp.Stream)
	}
	if ev.Error != "" {
		fmt.Fprintf(b, "      (%s)\n", printable(ev.Error))
	}
}

func sortByLevel(rs []CheckResult) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Level.Weight() > rs[j].Level.Weight() })
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// printable replaces control characters (a hostile server's ANSI escapes)
// in text shown to a person.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0)) {
			return r
		}
		return '�'
	}, s)
}

// ---------------------------------------------------------------- Markdown

// WriteMarkdown writes the compliance report: summary and score, findings
// (current behaviour, spec requirement, recommendation, evidence), and
// the acceptance checklist.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	name := r.Agent
	if name == "" {
		name = r.Target
	}
	fmt.Fprintf(&b, "# A2A %s compliance report: %s\n\n", r.Protocol, mdText(name))
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Target | %s |\n", mdCode(r.Target))
	if r.CardURL != "" {
		fmt.Fprintf(&b, "| Agent Card | %s |\n", mdCode(r.CardURL))
	}
	if r.Endpoint != "" {
		fmt.Fprintf(&b, "| JSON-RPC endpoint | %s |\n", mdCode(r.Endpoint))
	}
	fmt.Fprintf(&b, "| Agent | %s |\n", mdText(r.agentLine()))
	fmt.Fprintf(&b, "| Checked | %s by `%s` (%d checks, %s) |\n\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Checker,
		r.Counts.Total, roundDur(time.Duration(r.DurationMS)*time.Millisecond))

	if len(r.Interfaces) > 0 {
		fmt.Fprintf(&b, "## Interfaces\n\n")
		fmt.Fprintf(&b, "The interfaces the Agent Card declares, in its order; each is scored on its own checks and on the Agent Card checks of its version.\n\n")
		fmt.Fprintf(&b, "| Interface | URL | Result |\n|---|---|---|\n")
		for _, i := range r.Interfaces {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", i.Name, mdCode(i.URL), mdText(i.outcome()))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## Summary\n\n")
	fmt.Fprintf(&b, "**Score: %.1f %%** — %s\n\n", r.Score, r.verdict())
	fmt.Fprintf(&b, "Failed: **%d MUST**, %d SHOULD, %d MAY. Passed %d, skipped %d, not applicable %d.\n\n",
		r.Failed[Must], r.Failed[Should], r.Failed[May], r.Counts.Pass, r.Counts.Skip, r.Counts.NotApplicable)
	fmt.Fprintf(&b, "| Category | Pass | Fail | Skip | N/A |\n|---|---:|---:|---:|---:|\n")
	for _, c := range r.Categories {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", c.Title, c.Pass, c.Fail, c.Skip, c.NotApplicable)
	}
	fmt.Fprintf(&b, "| **Total** | **%d** | **%d** | **%d** | **%d** |\n\n", r.Counts.Pass, r.Counts.Fail, r.Counts.Skip, r.Counts.NotApplicable)
	fmt.Fprintf(&b, "The score is the weighted share of applicable checks that passed (MUST 3, SHOULD 2, MAY 1); skipped and not applicable checks do not count.\n\n")

	var failed []CheckResult
	for _, cr := range r.Results {
		if cr.Status == Fail {
			failed = append(failed, cr)
		}
	}
	sortByLevel(failed)
	fmt.Fprintf(&b, "## Findings\n\n")
	if len(failed) == 0 {
		fmt.Fprintf(&b, "No check failed.\n\n")
	}
	for i, cr := range failed {
		fmt.Fprintf(&b, "### %d. `%s`: %s (%s, %s)\n\n", i+1, cr.ID, mdText(cr.Title), cr.Level, cr.Section)
		fmt.Fprintf(&b, "- **Current behaviour:** %s\n", mdText(cr.Message))
		fmt.Fprintf(&b, "- **Spec requirement:** %s\n", mdText(cr.Requirement))
		fmt.Fprintf(&b, "- **Recommendation:** %s\n\n", mdText(cr.Recommendation))
		if len(cr.Evidence) > 0 {
			fmt.Fprintf(&b, "Evidence:\n\n")
			for _, ev := range cr.Evidence {
				writeEvidenceMarkdown(&b, ev)
			}
		}
	}

	fmt.Fprintf(&b, "## Acceptance checklist\n\n")
	for _, c := range r.Categories {
		fmt.Fprintf(&b, "### %s\n\n", c.Title)
		for _, cr := range r.Results {
			if cr.Category != c.Name {
				continue
			}
			box := "[ ]"
			if cr.Status == Pass {
				box = "[x]"
			}
			fmt.Fprintf(&b, "- %s `%s` %s (%s, %s)", box, cr.ID, mdText(cr.Title), cr.Level, cr.Section)
			switch cr.Status {
			case Fail:
				fmt.Fprintf(&b, " — **FAIL**")
			case Skip:
				fmt.Fprintf(&b, " — *skipped: %s*", mdText(firstLine(cr.Message)))
			case NotApplicable:
				fmt.Fprintf(&b, " — *not applicable: %s*", mdText(firstLine(cr.Message)))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeEvidenceMarkdown(b *strings.Builder, ev Evidence) {
	req := ev.Request
	fence := "```"
	var body strings.Builder
	fmt.Fprintf(&body, "%s %s\n", req.Method, req.URL)
	for _, k := range sortedKeys(req.Headers) {
		fmt.Fprintf(&body, "%s: %s\n", k, req.Headers[k])
	}
	if req.Body != "" {
		fmt.Fprintf(&body, "\n%s\n", req.Body)
	}
	body.WriteString("\n")
	if ev.Response == nil {
		fmt.Fprintf(&body, "(no response: %s)\n", ev.Error)
	} else {
		resp := ev.Response
		fmt.Fprintf(&body, "HTTP %d\n", resp.Status)
		for _, k := range sortedKeys(resp.Headers) {
			fmt.Fprintf(&body, "%s: %s\n", k, resp.Headers[k])
		}
		if resp.Body != "" {
			fmt.Fprintf(&body, "\n%s\n", resp.Body)
		}
		if len(resp.Events) > 0 {
			body.WriteString("\n")
			for _, e := range resp.Events {
				if e.Event != "" {
					fmt.Fprintf(&body, "event: %s\n", e.Event)
				}
				if e.ID != "" {
					fmt.Fprintf(&body, "id: %s\n", e.ID)
				}
				fmt.Fprintf(&body, "data: %s\n\n", oneLine(e.Data))
			}
		}
		if resp.Stream != "" {
			fmt.Fprintf(&body, "(stream %s)\n", resp.Stream)
		}
		if ev.Error != "" {
			fmt.Fprintf(&body, "(%s)\n", ev.Error)
		}
	}
	text := strings.TrimRight(printable(body.String()), "\n") + "\n"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	fmt.Fprintf(b, "%shttp\n%s%s\n\n", fence, text, fence)
}

// mdText escapes text for a Markdown line (no line breaks, no tables).
func mdText(s string) string {
	s = printable(s)
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return s
}

func mdCode(s string) string {
	s = mdText(s)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}
