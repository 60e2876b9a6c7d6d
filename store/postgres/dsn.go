package postgres

import (
	"net/url"
	"strings"
)

// redacted replaces a password in what RedactDSN returns.
const redacted = "xxxxx"

// RedactDSN returns dsn with its password replaced by "xxxxx", for logs
// and error messages: in the user information of a URL
// (postgres://user:secret@host/db), in a password query parameter, and
// in a password=... pair of the key=value form (quoted or not). A URL
// that does not parse keeps only its scheme and what follows the last
// '@' (the host, database and parameters, with any password parameter
// replaced). Input longer than 8 KiB is not parsed: RedactDSN returns
// "(DSN too long)".
func RedactDSN(dsn string) string {
	if len(dsn) > maxDSN {
		return "(DSN too long)"
	}
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok && (scheme == "postgres" || scheme == "postgresql") {
		return redactURL(scheme, rest)
	}
	return redactPairs(dsn)
}

// redactURL redacts a URL DSN: scheme "://" rest. The user information
// ends at the first '@' before any '/' (as pgconn parses it); its
// password goes. An '@' left after it means the URL is malformed (an
// unescaped '/' in a password, say): everything up to the last '@' before
// the query goes.
// Then the values of the password and sslpassword query parameters go.
func redactURL(scheme, rest string) string {
	var b strings.Builder
	b.WriteString(scheme + "://")
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		user, _, hasPassword := strings.Cut(rest[:i], ":")
		b.WriteString(user)
		if hasPassword {
			b.WriteString(":" + redacted)
		}
		b.WriteByte('@')
		rest = rest[i+1:]
	}
	// The query starts at the first '?' (net/url, which pgconn uses, cuts
	// it off before it reads the authority), so an '@' inside the query
	// is a query character and does not move the cut.
	base, q, hasQuery := strings.Cut(rest, "?")
	if at := strings.LastIndexByte(base, '@'); at >= 0 {
		b.WriteString(redacted + "@")
		base = base[at+1:]
	}
	b.WriteString(base)
	if hasQuery {
		b.WriteString("?" + redactQuery(q))
	}
	return b.String()
}

// redactQuery replaces the value of every password or sslpassword
// parameter of a URL query (and of any whose key does not unescape).
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if key, err := url.QueryUnescape(k); err != nil || secretKey(strings.TrimSpace(key)) {
			parts[i] = k + "=" + redacted
		}
	}
	return strings.Join(parts, "&")
}

// secretKey reports a DSN parameter whose value is a secret.
func secretKey(k string) bool {
	return strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword")
}

// redactPairs redacts a key=value DSN: the value of every key
// "password"; the rest is copied as it is. A value is a single-quoted
// string (with \' and \\ escapes) or runs to the next white space.
func redactPairs(dsn string) string {
	var b strings.Builder
	i := 0
	for i < len(dsn) {
		// White space between pairs.
		j := i
		for j < len(dsn) && isSpace(dsn[j]) {
			j++
		}
		b.WriteString(dsn[i:j])
		i = j
		if i >= len(dsn) {
			break
		}
		// The key, up to '=' (spaces allowed around it).
		eq := strings.IndexByte(dsn[i:], '=')
		if eq < 0 {
			b.WriteString(dsn[i:])
			break
		}
		key := strings.TrimSpace(dsn[i : i+eq])
		b.WriteString(dsn[i : i+eq+1])
		i += eq + 1
		for i < len(dsn) && isSpace(dsn[i]) {
			b.WriteByte(dsn[i])
			i++
		}
		// The value.
		start := i
		if i < len(dsn) && dsn[i] == '\'' {
			i++
			for i < len(dsn) && dsn[i] != '\'' {
				if dsn[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i+1, len(dsn))
		} else {
			for i < len(dsn) && !isSpace(dsn[i]) {
				if dsn[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i, len(dsn))
		}
		if secretKey(key) || strings.ContainsAny(key, " \t\n\r\v\f") {
			b.WriteString(redacted)
		} else {
			b.WriteString(dsn[start:i])
		}
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// passwords returns the passwords dsn holds, as written and decoded,
// for scrub.
func passwords(dsn string) []string {
	var out []string
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok && (scheme == "postgres" || scheme == "postgresql") {
		for _, at := range []int{strings.IndexAny(rest, "@/"), strings.LastIndexByte(rest, '@')} {
			if at < 0 || rest[at] != '@' {
				continue
			}
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				out = append(out, pw)
				if d, err := url.PathUnescape(pw); err == nil {
					out = append(out, d)
				}
			}
		}
		if _, q, ok := strings.Cut(rest, "?"); ok {
			for _, p := range strings.Split(q, "&") {
				if k, v, _ := strings.Cut(p, "="); secretKey(k) {
					out = append(out, v)
					if d, err := url.QueryUnescape(v); err == nil {
						out = append(out, d)
					}
				}
			}
		}
		return out
	}
	// key=value: every value after a password key.
	rest := dsn
	for {
		k := strings.Index(strings.ToLower(rest), "password")
		if k < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[k+len("password"):], " \t\n\r\v\f")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\r\v\f")
		v := rest
		if strings.HasPrefix(v, "'") {
			v = v[1:]
			if end := strings.IndexByte(v, '\''); end >= 0 {
				v = v[:end]
			}
		} else if end := strings.IndexAny(v, " \t\n\r\v\f"); end >= 0 {
			v = v[:end]
		}
		out = append(out, v, strings.ReplaceAll(v, `\`, ""))
	}
}

// scrub removes from msg (an error message of the driver about dsn) the
// DSN itself and its passwords of 4 bytes or more.
func scrub(msg, dsn string) string {
	if dsn != "" {
		msg = strings.ReplaceAll(msg, dsn, RedactDSN(dsn))
	}
	for _, pw := range passwords(dsn) {
		if len(pw) >= 4 {
			msg = strings.ReplaceAll(msg, pw, redacted)
		}
	}
	return msg
}
