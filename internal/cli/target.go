package cli

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/a2abridge/a2abridge/internal/profiles"
	"github.com/spf13/pflag"
)

// Environment variables read by the client commands.
const (
	envClientToken  = "A2ABRIDGE_CLIENT_TOKEN"   // bearer token when --token is absent
	envClientAPIKey = "A2ABRIDGE_CLIENT_API_KEY" // API key when --api-key is absent
	envClientConfig = profiles.EnvConfig         // the client config file
)

// connFlags are the flags that say how to reach and authenticate to an
// agent: the client commands, check and bench register those they use.
type connFlags struct {
	headers []string
	token   string
	apiKey  string
	profile string
}

func (f *connFlags) register(fs *pflag.FlagSet, apiKey bool) {
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header NAME:VALUE (repeatable; overrides a profile's header of the same name)")
	fs.StringVar(&f.token, "token", "", "bearer token, sent as the card's security schemes require (default: $"+envClientToken+", else the profile's token)")
	if apiKey {
		fs.StringVar(&f.apiKey, "api-key", "", "API key, placed where the card's apiKey scheme says (default: $"+envClientAPIKey+", else the profile's api_key)")
	}
	fs.StringVar(&f.profile, "profile", "", "use this profile of the client config file ($"+envClientConfig+", default ~/.config/a2abridge/client.yaml) for credentials and headers")
}

// target is an agent to call: its URL and the credentials to send.
type target struct {
	url     string      // absolute http(s) URL
	name    string      // how hints refer to it: the profile name or the URL
	flags   []string    // options hints repeat (--profile NAME)
	token   string      // never printed
	apiKey  string      // never printed
	headers http.Header // never printed (may hold credentials)
	// secretFlags: credentials or headers came from the command line, so
	// a hint cannot repeat them.
	secretFlags bool
}

// resolveTarget turns the URL argument (a URL or a profile name) and the
// connection flags into a target. Precedence: command-line flags, then
// environment variables, then the profile.
func resolveTarget(arg string, f *connFlags) (*target, error) {
	t := &target{headers: http.Header{}}
	var prof *profiles.Profile
	var profName string
	if f.profile != "" {
		p, err := loadProfile(f.profile)
		if err != nil {
			return nil, err
		}
		prof, profName = p, f.profile
		t.flags = append(t.flags, "--profile", f.profile)
	}
	switch {
	case hasScheme.MatchString(arg):
	case profiles.Name.MatchString(arg):
		p, err := findProfile(arg)
		if err != nil {
			return nil, err
		}
		if p != nil {
			if prof != nil && profName != arg {
				return nil, usageError{fmt.Errorf("%q names a profile and --profile names %q: give one", arg, profName)}
			}
			if p.URL == "" {
				return nil, usageError{fmt.Errorf("profile %q has no url: give the agent's URL and --profile %s", arg, arg)}
			}
			prof, profName = p, arg
			t.name, t.flags = arg, nil
			arg = p.URL
		}
	}
	u, err := normalizeURL(arg)
	if err != nil {
		if prof == nil && profiles.Name.MatchString(arg) {
			return nil, usageError{fmt.Errorf("%q has no scheme and is not a profile in %s: add https:// (or http://); only loopback hosts (localhost, 127.0.0.0/8, ::1) default to http://", arg, profiles.Path())}
		}
		return nil, err
	}
	t.url = u
	if t.name == "" {
		t.name = u
	}
	if prof != nil {
		if prof.URL != "" && f.profile != "" && hostOf(prof.URL) != hostOf(u) {
			return nil, usageError{fmt.Errorf("profile %q is for %s: its credentials are not sent to %s", profName, hostOf(prof.URL), hostOf(u))}
		}
		t.token, t.apiKey = prof.Token, prof.APIKey
		for k, v := range prof.Headers {
			t.headers.Set(k, v)
		}
	}
	if v := os.Getenv(envClientToken); v != "" {
		t.token = v
	}
	if v := os.Getenv(envClientAPIKey); v != "" {
		t.apiKey = v
	}
	if f.token != "" {
		t.token, t.secretFlags = f.token, true
	}
	if f.apiKey != "" {
		t.apiKey, t.secretFlags = f.apiKey, true
	}
	h, err := parseHeaders(f.headers)
	if err != nil {
		return nil, err
	}
	for k, vs := range h {
		t.headers[k] = vs
		t.secretFlags = true
	}
	return t, nil
}

// credentials reports whether t sends credentials.
func (t *target) credentials() bool {
	return t.token != "" || t.apiKey != "" || t.headers.Get("Authorization") != ""
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

func parseHeaders(kvs []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageError{fmt.Errorf("--header %q: want NAME:VALUE", kv)}
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}

// normalizeURL checks an agent URL given on the command line. A URL
// without a scheme gets http:// when its host is a loopback host
// (localhost, 127.0.0.0/8, ::1); any other host needs an explicit scheme.
// It returns an absolute http or https URL or a usage error.
func normalizeURL(raw string) (string, error) {
	if hasScheme.MatchString(raw) {
		p, err := url.Parse(raw)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return "", usageError{fmt.Errorf("%q is not an http(s) URL", raw)}
		}
		// Schemes are case-insensitive (RFC 3986 §3.1): "HTTP://h" is
		// http://h, written in the canonical lower case.
		return p.Scheme + raw[len(p.Scheme):], nil
	}
	p, err := url.Parse("http://" + raw)
	if err != nil || p.Host == "" || raw == "" || strings.HasPrefix(raw, "/") {
		return "", usageError{fmt.Errorf("%q is not an http(s) URL", raw)}
	}
	if !loopbackHost(p.Hostname()) {
		return "", usageError{fmt.Errorf("%q has no scheme: add https:// (or http://); only loopback hosts (localhost, 127.0.0.0/8, ::1) default to http://", raw)}
	}
	return "http://" + raw, nil
}

// hasScheme matches a URL that starts with a scheme (RFC 3986 §3.1).
var hasScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// findProfile returns the named profile of the client config file (its
// ${NAME} references expanded), or nil when the file has none of that
// name.
func findProfile(name string) (*profiles.Profile, error) {
	p, err := profiles.Find(name)
	if err != nil {
		return nil, usageError{err}
	}
	return p, nil
}

// loadProfile is findProfile for --profile: the profile must exist.
func loadProfile(name string) (*profiles.Profile, error) {
	p, err := findProfile(name)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, usageError{fmt.Errorf("--profile %s: no such profile in %s", name, profiles.Path())}
	}
	return p, nil
}
