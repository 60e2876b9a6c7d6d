package bench

import (
	"bytes"
	"strconv"
)

// Request bodies are built by appending to a reused buffer: a constant
// prefix, the request's unique id, and a constant suffix.

// appendSend appends a message/send or message/stream request whose
// messageId is unique per run and id.
func appendSend(dst []byte, method, runID string, id int64, text string, blocking bool) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, `","params":{"message":{"kind":"message","role":"user","messageId":"bench-`...)
	dst = append(dst, runID...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `","parts":[{"kind":"text","text":`...)
	dst = strconv.AppendQuote(dst, text)
	dst = append(dst, `}]}`...)
	if !blocking {
		dst = append(dst, `,"configuration":{"blocking":false}`...)
	}
	dst = append(dst, `}}`...)
	return dst
}

// appendResubscribe appends a tasks/resubscribe request.
func appendResubscribe(dst []byte, id int64, taskID string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"tasks/resubscribe","params":{"id":`...)
	dst = strconv.AppendQuote(dst, taskID)
	dst = append(dst, `}}`...)
	return dst
}

// payloadText is n bytes of printable ASCII that needs no JSON escaping.
func payloadText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[i%len(alphabet)]
	}
	return string(b)
}

// The response checks below look at the top level of a JSON object only,
// skipping nested values without decoding them: the client must cost far
// less than the servers it measures.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"'.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		return j, j > i
	}
}

// eachMember calls fn with every top-level key (without its quotes, not
// unescaped) and raw value of the JSON object b. It reports whether b
// was a well-formed object as far as the scan could tell.
func eachMember(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end, ok := skipString(b, i)
		if !ok {
			return false
		}
		key := b[i+1 : end-1]
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			return false
		}
		fn(key, b[i:vend])
		i = skipWS(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// envelope is what the client checks of a JSON-RPC response.
type envelope struct {
	idOK      bool
	hasResult bool
	errCode   string // raw error.code when the response is an error
	kind      string // result.kind
	final     bool   // result.final
}

// checkEnvelope scans a JSON-RPC response: its id must be wantID, and it
// must carry a result (or an error, whose code is returned). With deep
// set, result.kind and result.final are read too (for stream frames).
func checkEnvelope(b, wantID []byte, deep bool) (envelope, bool) {
	var e envelope
	ok := eachMember(b, func(k, v []byte) {
		switch string(k) {
		case "id":
			e.idOK = bytes.Equal(v, wantID)
		case "result":
			e.hasResult = true
			if deep {
				eachMember(v, func(k, v []byte) {
					switch string(k) {
					case "kind":
						if len(v) >= 2 {
							e.kind = string(v[1 : len(v)-1])
						}
					case "final":
						e.final = string(v) == "true"
					}
				})
			}
		case "error":
			e.errCode = "?"
			eachMember(v, func(k, v []byte) {
				if string(k) == "code" {
					e.errCode = string(v)
				}
			})
		}
	})
	return e, ok
}
