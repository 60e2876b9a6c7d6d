package client

import (
	"net/http"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// applyCredentials puts token and apiKey where the card's securitySchemes
// say (A2A 0.3.0 §5.5.3): a bearer token in Authorization for http
// "bearer", oauth2 and openIdConnect schemes (or when the card declares
// none); an API key in the header, query parameter or cookie named by each
// apiKey scheme (X-API-Key header when the card declares none).
func applyCredentials(req *http.Request, card *a2a.AgentCard, token, apiKey string) {
	names := make([]string, 0, len(card.SecuritySchemes))
	for k := range card.SecuritySchemes {
		names = append(names, k)
	}
	slices.Sort(names)
	bearer, keyPlaced := false, false
	for _, n := range names {
		switch s := card.SecuritySchemes[n].(type) {
		case a2a.HTTPAuthSecurityScheme:
			if strings.EqualFold(s.Scheme, "bearer") {
				bearer = true
			}
		case a2a.OAuth2SecurityScheme, a2a.OpenIDConnectSecurityScheme:
			bearer = true
		case a2a.APIKeySecurityScheme:
			if apiKey == "" || s.Name == "" {
				continue
			}
			keyPlaced = true
			switch strings.ToLower(s.In) {
			case "query":
				q := req.URL.Query()
				q.Set(s.Name, apiKey)
				req.URL.RawQuery = q.Encode()
			case "cookie":
				req.AddCookie(&http.Cookie{Name: s.Name, Value: apiKey})
			default:
				req.Header.Set(s.Name, apiKey)
			}
		}
	}
	if token != "" && (bearer || len(card.SecuritySchemes) == 0) {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if apiKey != "" && !keyPlaced && len(card.SecuritySchemes) == 0 {
		req.Header.Set("X-API-Key", apiKey)
	}
}

// stripCredentials removes what applyCredentials and the Headers hook may
// have set, before a request goes to a host that must not see them.
func stripCredentials(req *http.Request, o *Options) {
	req.Header.Del("Authorization")
	req.Header.Del("Cookie")
	req.Header.Del("X-API-Key")
	if o.APIKey != "" {
		for k, vs := range req.Header {
			for _, v := range vs {
				if v == o.APIKey {
					req.Header.Del(k)
				}
			}
		}
		q := req.URL.Query()
		for k, vs := range q {
			for _, v := range vs {
				if v == o.APIKey {
					q.Del(k)
				}
			}
		}
		req.URL.RawQuery = q.Encode()
	}
	if o.Headers != nil {
		if h, err := o.Headers(req.Context(), ""); err == nil {
			for k := range h {
				req.Header.Del(k)
			}
		}
	}
}
