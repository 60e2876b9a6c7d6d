package edge

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/a2abridge/a2abridge/a2a"
)

// HeaderA2AVersion names the A2A 1.0 service parameter that carries the
// protocol version (Major.Minor) a request uses (A2A 1.0 §3.6, §14.2.1):
// a header, or a query parameter of the same name.
const HeaderA2AVersion = "A2A-Version"

// ServedVersions are the A2A protocol versions (Major.Minor) the
// transports can serve; Options.ProtocolVersions may serve fewer.
var ServedVersions = []string{a2a.Version03, a2a.Version10}

// RequestedVersion returns the A2A protocol version r asks for, as
// Major.Minor ("0.3" when it names none: A2A 1.0 §3.6.2), the raw value of
// its A2A-Version header (else its query parameter of that name; trimmed),
// and whether it is one of ServedVersions (the transports may still be
// configured not to serve it: Options.ProtocolVersions). A patch number is not
// considered ("0.3.0" is 0.3); a value that is not
// Major.Minor[.Patch] digits is not served.
func RequestedVersion(r *http.Request) (version, raw string, ok bool) {
	v := r.Header.Get(HeaderA2AVersion)
	if v == "" && r.URL.RawQuery != "" {
		v = r.URL.Query().Get(HeaderA2AVersion)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return a2a.Version03, v, true
	}
	mm, ok := MajorMinor(v)
	return mm, v, ok && slices.Contains(ServedVersions, mm)
}

// WrongFamily is the VersionNotSupportedError (-32009) for a method of
// one protocol version called with another version requested.
func WrongFamily(method, family, version string) *a2a.Error {
	hint := "send no A2A-Version header, or A2A-Version: 0.3"
	if family == a2a.Version10 {
		hint = "send the header A2A-Version: 1.0"
	}
	return a2a.ErrVersionNotSupported.WithMessage("Method %s is A2A %s but the request asked for A2A %s: %s", method, family, version, hint).
		WithData(map[string]any{"requestedVersion": version, "supportedVersions": ServedVersions})
}

// MajorMinor returns "MAJOR.MINOR" of a version "MAJOR.MINOR[.PATCH]"
// (decimal digits each), and false for anything else.
func MajorMinor(v string) (string, bool) {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	return parts[0] + "." + parts[1], true
}

// VersionNotSupported is the VersionNotSupportedError (-32009, A2A 1.0
// §3.6.2, §5.4) for a request that asked for version v, which no
// transport serves; served are the versions served.
func VersionNotSupported(v string, served []string) *a2a.Error {
	return a2a.ErrVersionNotSupported.WithMessage("A2A-Version %q is not supported by this agent; it serves %s",
		PrintableASCII(v, 32), strings.Join(served, ", ")).
		WithData(map[string]any{"requestedVersion": PrintableASCII(v, 32), "supportedVersions": served})
}

// versionHint tells a client how to ask for the one version served.
func versionHint(served []string) string {
	if len(served) == 1 && served[0] == a2a.Version10 {
		return " (send the header A2A-Version: 1.0 and the A2A 1.0 method names or paths)"
	}
	if len(served) == 1 {
		return " (send no A2A-Version header, or A2A-Version: " + served[0] + ")"
	}
	return ""
}

// Serves reports whether the transports serve A2A version v (Major.Minor).
func (o Options) Serves(v string) bool { return slices.Contains(o.ProtocolVersions, v) }

// VersionRefused is the VersionNotSupportedError (-32009) of a request
// that asked for version (Major.Minor; raw, its A2A-Version value, ""
// when it named none) when that version is not among those served.
func (o Options) VersionRefused(version, raw string) *a2a.Error {
	asked := fmt.Sprintf("A2A-Version %q", PrintableASCII(raw, 32))
	if raw == "" {
		asked = "A request without A2A-Version (A2A 0.3)"
	}
	return a2a.ErrVersionNotSupported.WithMessage("%s is not served by this agent; it serves A2A %s%s",
		asked, strings.Join(o.ProtocolVersions, ", "), versionHint(o.ProtocolVersions)).
		WithData(map[string]any{"requestedVersion": version, "supportedVersions": o.ProtocolVersions})
}

// MethodRefused is the VersionNotSupportedError (-32009) of a method of
// protocol version family when that version is not served.
func (o Options) MethodRefused(method, family string) *a2a.Error {
	return a2a.ErrVersionNotSupported.WithMessage("Method %s is A2A %s, which this agent does not serve; it serves A2A %s%s",
		method, family, strings.Join(o.ProtocolVersions, ", "), versionHint(o.ProtocolVersions)).
		WithData(map[string]any{"requestedVersion": family, "supportedVersions": o.ProtocolVersions})
}
