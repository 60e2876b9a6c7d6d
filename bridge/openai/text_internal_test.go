package openai

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
)

func TestErrorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"The model x does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`: "The model x does not exist",
		`{"error":{"message":"model \"x\" not found, try pulling it first"}}`:                                                     `model "x" not found, try pulling it first`,
		`{"error":"rate limited"}`: "rate limited",
		`{"object":"error","message":"The model y does not exist.","code":404}`: "The model y does not exist.",
		`{"detail":"Not Found"}`:                    "Not Found",
		`{"detail":[{"loc":["body"],"msg":"x"}]}`:   "",
		"upstream connect error\r\nor disconnect":   "upstream connect error or disconnect",
		"<html><body>502 Bad Gateway</body></html>": "",
		"":                       "",
		`{"error":{"code":401}}`: "",
	} {
		if got := errorMessage([]byte(body)); got != want {
			t.Errorf("errorMessage(%q) = %q, want %q", body, got, want)
		}
	}
	long := strings.Repeat("x", 1000)
	if got := errorMessage([]byte(`{"error":{"message":"` + long + `"}}`)); utf8.RuneCountInString(got) != 301 || !strings.HasSuffix(got, "…") {
		t.Errorf("long message cut to %d characters", utf8.RuneCountInString(got))
	}
}

// FuzzErrorMessage: whatever an endpoint answers, the message shown is one
// line of valid UTF-8 of at most 300 characters (and an ellipsis).
func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","type":"t","param":null,"code":"c"}}`, `{"error":"e"}`, `{"message":"m"}`,
		`{"detail":"d"}`, "plain text\n", "\xff\xfe", `{"error":{"message":"a\u0000b\nc"}}`, `[1,2]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := errorMessage(body)
		checkLine(t, got, 300)
	})
}

func checkLine(t *testing.T, s string, n int) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8 %q", s)
	}
	if c := utf8.RuneCountInString(s); c > n+1 {
		t.Fatalf("%d characters > %d", c, n)
	}
	for _, r := range s {
		if unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
			t.Fatalf("control or line break %q in %q", r, s)
		}
	}
	if strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") || strings.Contains(s, "  ") {
		t.Fatalf("untidy spaces in %q", s)
	}
}

// FuzzConversation builds the history from arbitrary earlier tasks: the
// turns alternate, start with a user turn, end with an answer, are at
// most n, and their texts are valid UTF-8 of at most maxBytes together.
func FuzzConversation(f *testing.F) {
	f.Add([]byte{2, 1, 1, 0, 3, 2}, 4, 1000, "x")
	f.Add([]byte{0, 0, 0}, 1, 10, "")
	f.Add([]byte{5, 1}, 20, 7, "héllo wörld")
	f.Add([]byte{1, 1, 1, 1, 2, 2}, 64, 30, "€€€€€€€€€€€€")
	f.Fuzz(func(t *testing.T, shape []byte, n, maxBytes int, text string) {
		n %= 64
		maxBytes %= 1 << 16
		text = strings.ToValidUTF8(text, "?")
		// Each pair of bytes is a task: its user messages and its
		// artifacts.
		var past []source
		for i := 0; i+1 < len(shape); i += 2 {
			var tk a2a.Task
			for j := range int(shape[i] % 5) {
				tk.History = append(tk.History, a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(string(rune('a'+j))+text), a2a.NewDataPart(text)))
				tk.History = append(tk.History, a2a.NewMessage(a2a.RoleAgent, a2a.NewTextPart("status")))
			}
			for j := range int(shape[i+1] % 5) {
				tk.Artifacts = append(tk.Artifacts, a2a.Artifact{ArtifactID: "x", Parts: []a2a.Part{a2a.NewTextPart("ans" + text), a2a.NewDataPart(j)}})
			}
			past = append(past, taskSources(tk, i == 0)...)
		}
		got := buildHistory(past, n, maxBytes)
		if len(got) > max(n, 0) {
			t.Fatalf("%d turns > %d", len(got), n)
		}
		total := 0
		for i, tu := range got {
			if tu.assistant != (i%2 == 1) {
				t.Fatalf("turn %d: assistant=%v (%+v)", i, tu.assistant, got)
			}
			if !utf8.ValidString(tu.text) {
				t.Fatalf("turn %d: invalid UTF-8 %q", i, tu.text)
			}
			total += len(tu.text)
		}
		if len(got)%2 != 0 {
			t.Fatalf("history ends with a user turn: %+v", got)
		}
		if total > max(maxBytes, 0) {
			t.Fatalf("%d bytes of history > %d", total, maxBytes)
		}
	})
}

// The history keeps the newest turns within the byte bound, cuts the
// one that crosses it (keeping its beginning, marked), leaves older ones
// out, and gives an answer that does not fit half of what is left so its
// question comes along.
func TestBuildHistoryBytes(t *testing.T) {
	task := func(q, a string) a2a.Task {
		return a2a.Task{History: []a2a.Message{a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(q))},
			Artifacts: []a2a.Artifact{{ArtifactID: "r", Parts: []a2a.Part{a2a.NewTextPart(a)}}}}
	}
	var srcs []source
	for _, tk := range []a2a.Task{task("q1", "a1"), task(strings.Repeat("Q", 100), "a2"), task("q3", "a3")} {
		srcs = append(srcs, taskSources(tk, false)...)
	}
	texts := func(ts []turn) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.text)
		}
		return out
	}
	for _, c := range []struct {
		max  int
		want []string
	}{
		{1 << 20, []string{"q1", "a1", strings.Repeat("Q", 100), "a2", "q3", "a3"}},
		{4, []string{"q3", "a3"}},
		// q2 crosses the bound: its beginning is kept, q1/a1 are out.
		{4 + 2 + 30, []string{strings.Repeat("Q", 30-len(cutMark)) + cutMark, "a2", "q3", "a3"}},
		{3, nil}, // a3 does not fit with its question
	} {
		got := texts(buildHistory(srcs, 20, c.max))
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("max %d: %q, want %q", c.max, got, c.want)
		}
	}
	// A huge last answer: half of the bound, its question the rest.
	big := []source{}
	big = append(big, taskSources(task("old", "old answer"), false)...)
	big = append(big, taskSources(task("question", strings.Repeat("A", 1000)), false)...)
	got := texts(buildHistory(big, 20, 100))
	if len(got) != 2 || got[0] != "question" || len(got[1]) != 50 || !strings.HasSuffix(got[1], cutMark) {
		t.Errorf("huge answer: %q", got)
	}
	// A huge text is not copied whole: the text built is the bound's.
	huge := taskSources(task(strings.Repeat("x", 10<<20), "a"), false)
	if got := texts(buildHistory(huge, 20, 64<<10)); len(got) != 2 || len(got[0]) != 64<<10-1 {
		t.Errorf("huge question: %d turns", len(got))
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"  a \n\t b  ": "a b",
		"\x00x\x01":    "x",
		"ok":           "ok",
		"\xffz":        "\uFFFDz",
	} {
		if got := clean(in, 10); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := clean("abcdef", 3); got != "abc…" {
		t.Errorf("cut: %q", got)
	}
}
