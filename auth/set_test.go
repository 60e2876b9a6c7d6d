package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/schematest"
	v03 "github.com/a2abridge/a2abridge/internal/wire/v03"
)

// testSet is one agent's schemes: static bearer tokens, an API key header
// and JWTs from a test IdP.
func testSet(t *testing.T) (Set, *idp) {
	t.Helper()
	static, err := NewBearerTokens("bearer", map[string]string{"ops": "ops-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := NewAPIKey("apiKey", "header", "X-API-Key", map[string]string{"svc": HashToken("svc-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	p := newIDP(t, key0(t))
	j, err := NewJWT("oidc", JWTOptions{Issuer: p.issuer(), Audience: []string{"a2a://agents/echo"}})
	if err != nil {
		t.Fatal(err)
	}
	s := Set{static, key, j}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s, p
}

func key0(t *testing.T) *testKey { return key(t, "ec-1") }

func TestSetAuthenticate(t *testing.T) {
	t.Parallel()
	s, p := testSet(t)
	now := time.Now()
	jwtOK := sign(t, key0(t), claims(p.issuer(), now, nil))
	jwtExpired := sign(t, key0(t), claims(p.issuer(), now, map[string]any{"exp": now.Add(-time.Hour).Unix()}))
	tests := []struct {
		name       string
		headers    []string
		scheme     string // success: the scheme that authenticated
		subject    string
		err        error
		errScheme  string // failure: the scheme whose error is returned
		wantReason string
	}{
		{"static bearer", []string{"Authorization", "Bearer ops-token-0123456789"}, "bearer", "ops", nil, "", ""},
		{"api key", []string{"X-API-Key", "svc-key-0123456789"}, "apiKey", "svc", nil, "", ""},
		{"jwt", []string{"Authorization", "Bearer " + jwtOK}, "oidc", "user-1", nil, "", ""},
		{"first success wins over an invalid scheme", []string{"X-API-Key", "wrong", "Authorization", "Bearer " + jwtOK}, "oidc", "user-1", nil, "", ""},
		{"nothing", nil, "", "", ErrNoCredentials, "", ""},
		{"invalid beats missing", []string{"X-API-Key", "wrong"}, "", "", ErrInvalidCredentials, "apiKey", "unknown API key"},
		{"recognised invalid beats unrecognised", []string{"Authorization", "Bearer " + jwtExpired}, "", "", ErrInvalidCredentials, "oidc", "token expired"},
		{"earliest invalid wins among equals", []string{"Authorization", "Bearer opaque-0123456789"}, "", "", ErrInvalidCredentials, "bearer", "unknown token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.Authenticate(request("/a2a/echo", tt.headers...))
			wantResult(t, got, err, tt.scheme, tt.subject, tt.err, tt.wantReason)
			if err == nil {
				return
			}
			ch := s.ChallengesFor(err)
			var want []string
			switch tt.errScheme {
			case "":
				want = []string{`Bearer realm="a2a"`, `APIKey realm="a2a", in="header", name="X-API-Key"`}
			case "apiKey":
				want = []string{`Bearer realm="a2a"`, `APIKey realm="a2a", in="header", name="X-API-Key"`}
			default: // both bearer schemes share the error variant
				want = []string{`Bearer realm="a2a", error="invalid_token", error_description="` + tt.wantReason + `"`, `APIKey realm="a2a", in="header", name="X-API-Key"`}
			}
			if !slices.Equal(ch, want) {
				t.Errorf("ChallengesFor = %q, want %q", ch, want)
			}
		})
	}
	t.Run("unavailable beats invalid", func(t *testing.T) {
		t.Parallel()
		down := newIDP(t)
		down.setStatus(http.StatusServiceUnavailable)
		j, err := NewJWT("jwt", JWTOptions{JWKSURL: down.jwksURL(), Audience: []string{"a2a://agents/echo"}})
		if err != nil {
			t.Fatal(err)
		}
		s2 := Set{s[0], j}
		_, err = s2.Authenticate(bearer(jwtOK))
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
	t.Run("empty set", func(t *testing.T) {
		t.Parallel()
		_, err := Set{}.Authenticate(request("/"))
		if !errors.Is(err, ErrNoCredentials) {
			t.Fatalf("err = %v", err)
		}
	})
	if got, want := s.Challenges(), []string{`Bearer realm="a2a"`, `APIKey realm="a2a", in="header", name="X-API-Key"`}; !slices.Equal(got, want) {
		t.Errorf("Challenges = %q, want %q", got, want)
	}
}

func TestSetValidate(t *testing.T) {
	t.Parallel()
	a, _ := NewBearerTokens("x", map[string]string{"s": "t"})
	b, _ := NewAPIKey("x", "header", "K", map[string]string{"s": "k"})
	for name, s := range map[string]Set{"duplicate name": {a, b}, "nil member": {a, nil}} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate = nil", name)
		}
	}
	if err := (Set{}).Validate(); err != nil {
		t.Errorf("empty set: %v", err)
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	s, p := testSet(t)
	h := s.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, ok := FromContext(r.Context())
		if !ok {
			t.Error("no principal in the context")
			return
		}
		_, _ = io.WriteString(w, pr.Scheme+":"+pr.Subject)
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	do := func(headers ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a/echo", strings.NewReader(`{}`))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	body := func(res *http.Response) string {
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}

	res := do("Authorization", "Bearer "+sign(t, key0(t), claims(p.issuer(), time.Now(), nil)))
	if res.StatusCode != http.StatusOK || body(res) != "oidc:user-1" {
		t.Errorf("valid JWT: %s", res.Status)
	}

	res = do()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no credentials: %s, want 401", res.Status)
	}
	if got := res.Header.Values("WWW-Authenticate"); !slices.Equal(got, s.Challenges()) {
		t.Errorf("WWW-Authenticate = %q, want %q", got, s.Challenges())
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Error("401 without Cache-Control: no-store")
	}

	res = do("Authorization", "Bearer wrong")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body(res), "unknown token") {
		t.Fatalf("wrong token: %s", res.Status)
	}
	if got := res.Header.Values("WWW-Authenticate"); len(got) != 2 || got[0] != `Bearer realm="a2a", error="invalid_token", error_description="unknown token"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}

	down := newIDP(t)
	down.setStatus(http.StatusInternalServerError)
	j, err := NewJWT("jwt", JWTOptions{JWKSURL: down.jwksURL(), Audience: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	Set{j}.Middleware(http.NotFoundHandler()).ServeHTTP(rec, bearer(sign(t, key0(t), claims("", time.Now(), nil))))
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), "500") || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("JWKS down: %d %q %q, want 503 without details", rec.Code, rec.Body, rec.Header())
	}

	// An empty set is no authentication.
	next := http.NotFoundHandler()
	rec = httptest.NewRecorder()
	Set(nil).Middleware(next).ServeHTTP(rec, request("/"))
	if rec.Code != http.StatusNotFound {
		t.Errorf("empty set: %d", rec.Code)
	}
}

func TestCardSecurity(t *testing.T) {
	t.Parallel()
	s, p := testSet(t)
	q, err := NewAPIKey("apiKeyQuery", "query", "api_key", map[string]string{"a": "k"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewAPIKey("apiKeyCookie", "cookie", "a2a_key", map[string]string{"a": "k"})
	if err != nil {
		t.Fatal(err)
	}
	s = append(s, q, c)
	schemes, security := s.CardSecurity()

	wantSecurity := []map[string][]string{{"bearer": {}}, {"apiKey": {}}, {"oidc": {}}, {"apiKeyQuery": {}}, {"apiKeyCookie": {}}}
	if diff := cmp.Diff(wantSecurity, security); diff != "" {
		t.Errorf("security (-want +got):\n%s", diff)
	}
	card := a2a.AgentCard{
		ProtocolVersion: a2a.ProtocolVersion, Name: "echo", Description: "Echoes", URL: "http://127.0.0.1/a2a/echo",
		PreferredTransport: a2a.TransportJSONRPC, Version: "1",
		SecuritySchemes: schemes, Security: security,
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "echo", Tags: []string{"echo"}}},
	}
	b, err := v03.MarshalAgentCard(&card)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "AgentCard", b)

	var got struct {
		SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
		Security        []map[string][]string     `json:"security"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"bearer":       {"type": "http", "scheme": "bearer"},
		"apiKey":       {"type": "apiKey", "in": "header", "name": "X-API-Key"},
		"oidc":         {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
		"apiKeyQuery":  {"type": "apiKey", "in": "query", "name": "api_key"},
		"apiKeyCookie": {"type": "apiKey", "in": "cookie", "name": "a2a_key"},
	}
	for name, sch := range got.SecuritySchemes {
		if d, _ := sch["description"].(string); d == "" {
			t.Errorf("scheme %s has no description", name)
		}
		delete(sch, "description")
	}
	if diff := cmp.Diff(want, got.SecuritySchemes); diff != "" {
		t.Errorf("securitySchemes on the wire (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSecurity, got.Security); diff != "" {
		t.Errorf("security on the wire (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b), p.issuer()) {
		t.Errorf("JWT scheme description does not name the issuer: %s", b)
	}
	// Round trip through the card decoder keeps the schemes.
	back, err := v03.UnmarshalAgentCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(schemes, back.SecuritySchemes); diff != "" {
		t.Errorf("schemes round trip (-want +got):\n%s", diff)
	}

	if sc, sec := (Set{}).CardSecurity(); sc != nil || sec != nil {
		t.Errorf("empty set: %v %v, want nil nil", sc, sec)
	}
}

func TestContext(t *testing.T) {
	t.Parallel()
	if p, ok := FromContext(context.Background()); ok || p != nil {
		t.Fatalf("FromContext(empty) = %v, %v", p, ok)
	}
	want := &Principal{Subject: "s", Scheme: "bearer"}
	if p, ok := FromContext(NewContext(context.Background(), want)); !ok || p != want {
		t.Fatalf("FromContext = %v, %v", p, ok)
	}
	if _, ok := FromContext(NewContext(context.Background(), nil)); ok {
		t.Fatal("FromContext(nil principal) reported ok")
	}
}

func TestChallengeForSanitizes(t *testing.T) {
	t.Parallel()
	a, _ := NewBearerTokens("b", map[string]string{"s": "t"})
	err := invalid("b", "bad \"quote\" \\ and \n newline é")
	if got, want := ChallengeFor(a, err), `Bearer realm="a2a", error="invalid_token", error_description="bad quote  and  newline "`; got != want {
		t.Errorf("ChallengeFor = %q, want %q", got, want)
	}
}
