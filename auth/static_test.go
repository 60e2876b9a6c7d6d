package auth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// request builds a request to an A2A endpoint with the given headers.
func request(target string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://agent.test"+target, strings.NewReader("{}"))
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// wantResult checks the outcome of Authenticate: wantErr nil means success
// with subject wantSubject; otherwise errors.Is(err, wantErr) and, if
// wantReason is not "", the client-safe reason.
func wantResult(t *testing.T, p *Principal, err error, scheme, wantSubject string, wantErr error, wantReason string) {
	t.Helper()
	if wantErr == nil {
		if err != nil {
			t.Fatalf("Authenticate: %v, want subject %q", err, wantSubject)
		}
		if p == nil || p.Subject != wantSubject || p.Scheme != scheme {
			t.Fatalf("Authenticate = %+v, want subject %q scheme %q", p, wantSubject, scheme)
		}
		return
	}
	if err == nil {
		t.Fatalf("Authenticate = %+v, want error %v", p, wantErr)
	}
	if p != nil {
		t.Errorf("Authenticate returned principal %+v together with error %v", p, err)
	}
	if !errors.Is(err, wantErr) {
		t.Fatalf("Authenticate error = %v, want errors.Is %v", err, wantErr)
	}
	if wantReason != "" && Reason(err) != wantReason {
		t.Fatalf("Reason(%v) = %q, want %q", err, Reason(err), wantReason)
	}
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	// SHA-256("abc"), FIPS 180-2 appendix B.1.
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := HashToken("abc"); got != want {
		t.Fatalf("HashToken(abc) = %q, want %q", got, want)
	}
}

func TestBearerTokens(t *testing.T) {
	t.Parallel()
	a, err := NewBearerTokens("bearer", map[string]string{
		"alice": "alice-token-0123456789",
		"bob":   HashToken("bob-token-0123456789"), // hashed config
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		headers    []string
		subject    string
		err        error
		wantReason string
	}{
		{"right token", []string{"Authorization", "Bearer alice-token-0123456789"}, "alice", nil, ""},
		{"hashed config", []string{"Authorization", "Bearer bob-token-0123456789"}, "bob", nil, ""},
		{"scheme is case-insensitive", []string{"Authorization", "bearer alice-token-0123456789"}, "alice", nil, ""},
		{"wrong token", []string{"Authorization", "Bearer alice-token-0123456780"}, "", ErrInvalidCredentials, "unknown token"},
		{"the hash itself is not the token", []string{"Authorization", "Bearer " + HashToken("bob-token-0123456789")}, "", ErrInvalidCredentials, "unknown token"},
		{"missing", nil, "", ErrNoCredentials, ""},
		{"other auth-scheme", []string{"Authorization", "Basic YWxpY2U6cHc="}, "", ErrNoCredentials, ""},
		{"empty token", []string{"Authorization", "Bearer "}, "", ErrInvalidCredentials, "empty bearer token"},
		{"two tokens", []string{"Authorization", "Bearer alice-token-0123456789", "Authorization", "Bearer x"}, "", ErrInvalidCredentials, "more than one bearer token"},
		{"token with spaces", []string{"Authorization", "Bearer a b"}, "", ErrInvalidCredentials, "malformed bearer token"},
		{"token too long", []string{"Authorization", "Bearer " + strings.Repeat("x", maxCredentialLen+1)}, "", ErrInvalidCredentials, "bearer token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := a.Authenticate(request("/a2a/echo", tt.headers...))
			wantResult(t, p, err, "bearer", tt.subject, tt.err, tt.wantReason)
			if err != nil && strings.Contains(err.Error(), "alice-token") {
				t.Errorf("error %q leaks the configured or presented token", err)
			}
			if p != nil && p.Claims != nil {
				t.Errorf("Claims = %v, want nil for static tokens", p.Claims)
			}
		})
	}
	if got := a.Challenge(); got != `Bearer realm="a2a"` {
		t.Errorf("Challenge = %q", got)
	}
	_, err = a.Authenticate(request("/", "Authorization", "Bearer nope"))
	if got, want := ChallengeFor(a, err), `Bearer realm="a2a", error="invalid_token", error_description="unknown token"`; got != want {
		t.Errorf("ChallengeFor = %q, want %q", got, want)
	}
	_, err = a.Authenticate(request("/"))
	if got := ChallengeFor(a, err); got != `Bearer realm="a2a"` {
		t.Errorf("ChallengeFor(no credentials) = %q, want no error code (RFC 6750 §3.1)", got)
	}
}

func TestStaticConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func() (Authenticator, error)
	}{
		{"empty name", func() (Authenticator, error) { return NewBearerTokens("", map[string]string{"a": "t"}) }},
		{"no tokens", func() (Authenticator, error) { return NewBearerTokens("b", nil) }},
		{"empty subject", func() (Authenticator, error) { return NewBearerTokens("b", map[string]string{"": "t"}) }},
		{"empty token", func() (Authenticator, error) { return NewBearerTokens("b", map[string]string{"a": ""}) }},
		{"short hash", func() (Authenticator, error) { return NewBearerTokens("b", map[string]string{"a": "sha256:abcd"}) }},
		{"non-hex hash", func() (Authenticator, error) {
			return NewBearerTokens("b", map[string]string{"a": "sha256:" + strings.Repeat("z", 64)})
		}},
		{"same token twice", func() (Authenticator, error) {
			return NewBearerTokens("b", map[string]string{"a": "t", "c": HashToken("t")})
		}},
		{"api key: bad location", func() (Authenticator, error) { return NewAPIKey("k", "body", "key", map[string]string{"a": "k"}) }},
		{"api key: empty param", func() (Authenticator, error) { return NewAPIKey("k", "header", "", map[string]string{"a": "k"}) }},
		{"api key: bad param", func() (Authenticator, error) {
			return NewAPIKey("k", "header", "X Key", map[string]string{"a": "k"})
		}},
		{"api key: no keys", func() (Authenticator, error) { return NewAPIKey("k", "header", "X-API-Key", nil) }},
		{"api key: empty name", func() (Authenticator, error) {
			return NewAPIKey("", "header", "X-API-Key", map[string]string{"a": "k"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if a, err := tt.make(); err == nil {
				t.Fatalf("got %v, want an error", a)
			}
		})
	}
}

// TestConstantTimeCompare checks that presented secrets are compared with
// subtle.ConstantTimeCompare against every configured hash, with no early
// exit on a match.
func TestConstantTimeCompare(t *testing.T) {
	t.Parallel()
	for _, mk := range []func() (Authenticator, error){
		func() (Authenticator, error) {
			return NewBearerTokens("bearer", map[string]string{"a": "token-a", "b": "token-b", "c": HashToken("token-c")})
		},
		func() (Authenticator, error) {
			return NewAPIKey("key", "header", "X-API-Key", map[string]string{"a": "token-a", "b": "token-b", "c": HashToken("token-c")})
		},
	} {
		a, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		var s *secrets
		switch a := a.(type) {
		case *bearerTokens:
			s = a.secrets
		case *apiKey:
			s = a.secrets
		}
		if reflect.ValueOf(s.eq).Pointer() != reflect.ValueOf(subtle.ConstantTimeCompare).Pointer() {
			t.Fatalf("%s: secrets are not compared with subtle.ConstantTimeCompare", a.Name())
		}
		calls := 0
		s.eq = func(x, y []byte) int {
			calls++
			if len(x) != 32 || len(y) != 32 {
				t.Errorf("compared %d and %d bytes, want two SHA-256 hashes", len(x), len(y))
			}
			return subtle.ConstantTimeCompare(x, y)
		}
		for _, presented := range []string{"token-a", "token-c", "wrong"} {
			calls = 0
			req := request("/", "Authorization", "Bearer "+presented, "X-API-Key", presented)
			p, err := a.Authenticate(req)
			if calls != len(s.entries) {
				t.Errorf("%s: %q compared %d times, want %d (every entry, no early exit)", a.Name(), presented, calls, len(s.entries))
			}
			if presented == "wrong" {
				if !errors.Is(err, ErrInvalidCredentials) {
					t.Errorf("%s: wrong secret: err = %v", a.Name(), err)
				}
			} else if err != nil || p.Subject != presented[len("token-"):] {
				t.Errorf("%s: %q: p = %+v, err = %v", a.Name(), presented, p, err)
			}
		}
	}
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	keys := map[string]string{"svc-a": "key-aaaaaaaaaaaa", "svc-b": HashToken("key-bbbbbbbbbbbb")}
	header, err := NewAPIKey("apiKey", "header", "X-API-Key", keys)
	if err != nil {
		t.Fatal(err)
	}
	query, err := NewAPIKey("apiKeyQuery", "query", "api_key", keys)
	if err != nil {
		t.Fatal(err)
	}
	cookie, err := NewAPIKey("apiKeyCookie", "cookie", "a2a_key", keys)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		a          Authenticator
		target     string
		headers    []string
		subject    string
		err        error
		wantReason string
	}{
		{"header right", header, "/", []string{"X-API-Key", "key-aaaaaaaaaaaa"}, "svc-a", nil, ""},
		{"header hashed config", header, "/", []string{"x-api-key", "key-bbbbbbbbbbbb"}, "svc-b", nil, ""},
		{"header wrong", header, "/", []string{"X-API-Key", "key-cccccccccccc"}, "", ErrInvalidCredentials, "unknown API key"},
		{"header empty", header, "/", []string{"X-API-Key", ""}, "", ErrInvalidCredentials, "empty API key"},
		{"header twice", header, "/", []string{"X-API-Key", "key-aaaaaaaaaaaa", "X-API-Key", "x"}, "", ErrInvalidCredentials, "more than one API key"},
		{"header missing", header, "/", nil, "", ErrNoCredentials, ""},
		{"header: key in query is not accepted", header, "/?X-API-Key=key-aaaaaaaaaaaa", nil, "", ErrNoCredentials, ""},
		{"query right", query, "/a2a/echo?api_key=key-aaaaaaaaaaaa", nil, "svc-a", nil, ""},
		{"query hashed config", query, "/?api_key=key-bbbbbbbbbbbb", nil, "svc-b", nil, ""},
		{"query wrong", query, "/?api_key=nope", nil, "", ErrInvalidCredentials, "unknown API key"},
		{"query empty", query, "/?api_key=", nil, "", ErrInvalidCredentials, "empty API key"},
		{"query missing", query, "/?other=1", nil, "", ErrNoCredentials, ""},
		{"query: key in header is not accepted", query, "/", []string{"api_key", "key-aaaaaaaaaaaa"}, "", ErrNoCredentials, ""},
		{"cookie right", cookie, "/", []string{"Cookie", "theme=dark; a2a_key=key-aaaaaaaaaaaa"}, "svc-a", nil, ""},
		{"cookie hashed config", cookie, "/", []string{"Cookie", "a2a_key=key-bbbbbbbbbbbb"}, "svc-b", nil, ""},
		{"cookie wrong", cookie, "/", []string{"Cookie", "a2a_key=nope"}, "", ErrInvalidCredentials, "unknown API key"},
		{"cookie missing", cookie, "/", []string{"Cookie", "theme=dark"}, "", ErrNoCredentials, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := tt.a.Authenticate(request(tt.target, tt.headers...))
			wantResult(t, p, err, tt.a.Name(), tt.subject, tt.err, tt.wantReason)
		})
	}
	if got, want := header.Challenge(), `APIKey realm="a2a", in="header", name="X-API-Key"`; got != want {
		t.Errorf("Challenge = %q, want %q", got, want)
	}
	_, err = header.Authenticate(request("/", "X-API-Key", "nope"))
	if got := ChallengeFor(header, err); got != header.Challenge() {
		t.Errorf("ChallengeFor(API key) = %q, want the plain challenge (invalid_token is a bearer error code)", got)
	}
}
