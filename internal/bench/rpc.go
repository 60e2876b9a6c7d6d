package bench

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Request bodies are built by appending to a reused buffer: a constant
// prefix, the request's unique id, and a constant suffix.

// appendRPCHead appends the start of a JSON-RPC request up to its params
// value: {"jsonrpc":"2.0","id":ID,"method":"METHOD","params":
func appendRPCHead(dst []byte, id int64, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	return append(dst, `","params":`...)
}

// appendSend03 appends an A2A 0.3 message/send or message/stream request
// whose messageId is unique per run and id.
func appendSend03(dst []byte, method, runID string, id int64, text string, blocking bool) []byte {
	dst = appendRPCHead(dst, id, method)
	dst = append(dst, `{"message":{"kind":"message","role":"user","messageId":"bench-`...)
	dst = append(dst, runID...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `","parts":[{"kind":"text","text":`...)
	dst = appendQuote(dst, text)
	dst = append(dst, `}]}`...)
	if !blocking {
		dst = append(dst, `,"configuration":{"blocking":false}`...)
	}
	return append(dst, `}}`...)
}

// appendSendParams10 appends an A2A 1.0 SendMessageRequest (A2A 1.0
// §3.1.1, ProtoJSON): the params of SendMessage and SendStreamingMessage,
// and the body of POST /message:send and /message:stream. Non-blocking is
// "returnImmediately": true.
func appendSendParams10(dst []byte, runID string, id int64, text string, blocking bool) []byte {
	dst = append(dst, `{"message":{"messageId":"bench-`...)
	dst = append(dst, runID...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `","role":"ROLE_USER","parts":[{"text":`...)
	dst = appendQuote(dst, text)
	dst = append(dst, `}]}`...)
	if !blocking {
		dst = append(dst, `,"configuration":{"returnImmediately":true}`...)
	}
	return append(dst, '}')
}

// appendQuote appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendQuote(dst []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(dst, s)
	return out
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

// envelope is what the client checks of an answer.
type envelope struct {
	idOK      bool
	hasResult bool
	errCode   string // raw error.code when the response is an error
	kind      string // the payload's kind (see dialect.check)
	final     bool   // the payload ends a stream
}

// checkEnvelope scans a JSON-RPC response: its id must be wantID, and it
// must carry a result (or an error, whose code is returned). With scan
// set, the result is scanned by it too.
func checkEnvelope(b, wantID []byte, scan func(v []byte, e *envelope) bool) (envelope, bool) {
	var e envelope
	ok := eachMember(b, func(k, v []byte) {
		switch string(k) {
		case "id":
			e.idOK = bytes.Equal(v, wantID)
		case "result":
			e.hasResult = true
			if scan != nil {
				scan(v, &e)
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
