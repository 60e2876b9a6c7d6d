package readme

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image, [text](target), and
// captures the target up to a space (a title may follow) or ")".
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// docLinks returns the targets of the inline links of a Markdown document
// outside code blocks and code spans, with the line of each.
func docLinks(md []byte) []snippet {
	var out []snippet
	proseLines(md, func(n int, line string) {
		for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			out = append(out, snippet{line: n, code: m[1]})
		}
	})
	return out
}

// fenceOf reports whether line opens or closes a fenced code block, and
// its fence (``` or ~~~, possibly longer).
func fenceOf(line string) (string, bool) {
	s := strings.TrimLeft(line, " ")
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(s, c+c+c) {
			return s[:len(s)-len(strings.TrimLeft(s, c))], true
		}
	}
	return "", false
}

// stripCodeSpans removes `code spans` from a line (a link inside one is
// text, not a link).
func stripCodeSpans(line string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		b.WriteString(line[:i])
		run := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		rest := line[i+run:]
		j := strings.Index(rest, strings.Repeat("`", run))
		if j < 0 {
			b.WriteString(line[i:])
			return b.String()
		}
		line = rest[j+run:]
	}
}

// proseLines calls fn with each line of a Markdown document outside fenced
// code blocks, and its number (from 1).
func proseLines(md []byte, fn func(n int, line string)) {
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if f, ok := fenceOf(line); ok {
			switch {
			case fence == "":
				fence = f
				continue
			case strings.HasPrefix(f, fence) && strings.Trim(strings.TrimSpace(line), f[:1]) == "":
				fence = ""
				continue
			}
		}
		if fence == "" {
			fn(n, line)
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown document: the heading's text lower-cased, with every character
// but letters, digits, spaces, '-' and '_' dropped and spaces turned into
// '-'; a repeated anchor gets -1, -2, … appended.
func headingAnchors(md []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	proseLines(md, func(_ int, line string) {
		if !strings.HasPrefix(line, "#") {
			return
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if text == "" || len(line)-len(strings.TrimLeft(line, "#")) > 6 {
			return
		}
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			anchors[a+"-"+strconv.Itoa(k)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	})
	return anchors
}

func TestDocLinks(t *testing.T) {
	md := []byte("[a](x.md) `[b](y.md)` [c](z.md#h \"title\")\n```\n[d](no.md)\n```\n# Heading: `one`, two\n## Heading: one, two\n")
	links := docLinks(md)
	if len(links) != 2 || links[0].code != "x.md" || links[1].code != "z.md#h" || links[1].line != 1 {
		t.Fatalf("docLinks: %+v", links)
	}
	a := headingAnchors(md)
	if !a["heading-one-two"] || !a["heading-one-two-1"] || len(a) != 2 {
		t.Fatalf("headingAnchors: %v", a)
	}
}

// TestDocsRelativeLinks: every relative link of README.md and of the
// Markdown files under docs/ leads to a file or directory that exists in
// the repository, and a #fragment into a Markdown file (or within the
// same file) names one of its headings.
func TestDocsRelativeLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := map[string]map[string]bool{}
	anchors := func(file string) map[string]bool {
		if a, ok := anchorsOf[file]; ok {
			return a
		}
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		anchorsOf[file] = headingAnchors(md)
		return anchorsOf[file]
	}
	checked := 0
	for _, file := range docFiles(t, root) {
		md, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range docLinks(md) {
			target := l.code
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			target, frag, _ := strings.Cut(target, "#")
			resolved := file
			if target != "" {
				if strings.HasPrefix(target, "/") {
					t.Errorf("%s:%d: link %q is absolute; write it relative to the file", file, l.line, l.code)
					continue
				}
				resolved = path.Clean(path.Join(path.Dir(file), target))
				if resolved == ".." || strings.HasPrefix(resolved, "../") {
					t.Errorf("%s:%d: link %q leaves the repository", file, l.line, l.code)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(resolved))); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", file, l.line, l.code, resolved)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(resolved, ".md") && !anchors(resolved)[frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", file, l.line, l.code, resolved, frag)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found only %d relative links in README.md and docs/", checked)
	}
}
