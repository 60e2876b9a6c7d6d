package openai

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestParseRerank(t *testing.T) {
	for _, c := range []struct {
		body  string
		n     int
		want  []RerankResult
		model string
		usage int64
		err   bool
	}{
		{`{"model":"r","results":[{"index":0,"relevance_score":0.1},{"index":2,"relevance_score":0.9,"document":{"text":"c"}}],"usage":{"total_tokens":5}}`, 3,
			[]RerankResult{{2, 0.9}, {0, 0.1}}, "r", 5, false},
		{`[{"index":1,"score":2},{"index":0,"score":-1}]`, 2, []RerankResult{{1, 2}, {0, -1}}, "", 0, false},
		{`{"results":[{"index":1,"relevance_score":0.5},{"index":0,"relevance_score":0.5}]}`, 2, []RerankResult{{1, 0.5}, {0, 0.5}}, "", 0, false},
		{`{"results":[]}`, 2, []RerankResult{}, "", 0, false},
		{`{"results":[{"index":2,"relevance_score":1}]}`, 2, nil, "", 0, true},
		{`{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":2}]}`, 2, nil, "", 0, true},
		{`{"results":[{"index":0}]}`, 1, nil, "", 0, true},
		{`{"results":[{"relevance_score":1}]}`, 1, nil, "", 0, true},
		{`{"data":[]}`, 1, nil, "", 0, true},
		{`"x"`, 1, nil, "", 0, true},
		{`{"results":[{"index":0.5,"relevance_score":1}]}`, 1, nil, "", 0, true},
	} {
		got, err := parseRerank([]byte(c.body), c.n)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v", c.body, err)
			continue
		}
		if c.err {
			continue
		}
		if got.Model != c.model || len(got.Results) != len(c.want) || (got.Usage == nil) != (c.usage == 0) || got.Usage != nil && got.Usage.TotalTokens != c.usage {
			t.Errorf("%s: %+v", c.body, got)
			continue
		}
		for i := range c.want {
			if got.Results[i] != c.want[i] {
				t.Errorf("%s: results %+v, want %+v", c.body, got.Results, c.want)
			}
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]int64{"7": 7, " 0 ": 0, "-3": 0, "1.2": 2, now.Add(90 * time.Second).Format(http.TimeFormat): 90, now.Add(-time.Hour).Format(http.TimeFormat): 0} {
		if got, ok := retryAfterSeconds(v, now); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "NaN", "Inf"} {
		if _, ok := retryAfterSeconds(v, now); ok {
			t.Errorf("%q: accepted", v)
		}
	}
}

// FuzzParseRerank: parseRerank never panics, and what it accepts are
// distinct indexes of the documents with finite scores, most relevant
// first.
func FuzzParseRerank(f *testing.F) {
	for _, s := range []string{
		`{"model":"r","results":[{"index":0,"relevance_score":0.1},{"index":2,"relevance_score":0.9}],"usage":{"total_tokens":5}}`,
		`[{"index":1,"score":2},{"index":0,"score":-1}]`, `{"results":[{"index":-1,"relevance_score":1}]}`,
		`{"results":[{"index":0,"relevance_score":1e999}]}`, `{"results":null}`, `[]`, `{`, ``, `{"results":[{"index":1,"score":1,"relevance_score":null}]}`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		res, err := parseRerank(body, int(n))
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for i, r := range res.Results {
			if r.Index < 0 || r.Index >= int(n) || seen[r.Index] || math.IsNaN(r.RelevanceScore) || math.IsInf(r.RelevanceScore, 0) ||
				i > 0 && r.RelevanceScore > res.Results[i-1].RelevanceScore {
				t.Fatalf("%q: results %+v", body, res.Results)
			}
			seen[r.Index] = true
		}
	})
}
