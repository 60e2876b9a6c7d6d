package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"addr", "public_url", "data", "memory", "default", "push", "auth", "agents"}
	for key, want := range map[string]string{
		"pusj": "push", "Push": "push", "memroy": "memory", "public-url": "public_url", "publicurl": "public_url",
		"adress": "", "x": "", "agent": "agents", "defualt": "default", "authx": "auth", "ath": "auth", "zzzz": "",
	} {
		if got := Closest(key, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", key, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"héllo", "hello", 1}} {
		if got := editDistance(c.a, c.b); got != c.d || editDistance(c.b, c.a) != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
