package v10

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/a2aproto"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The decoder reads A2A 1.0 JSON token by token (jsontext), with one small
// function per message type. It keeps no wire structs: each member goes
// straight into the domain value. The decoder's stack gives the JSON
// Pointer of every error for free.
//
// ProtoJSON parsing rules it follows (https://protobuf.dev/programming-guides/json/):
//   - a member is matched by its lowerCamelCase JSON name or by its proto
//     field name (contextId or context_id), case-sensitively; both
//     spellings of one field in one object is an error;
//   - null stands for an absent field, except for a Part's data
//     (google.protobuf.Value), where it is the JSON null;
//   - int32 fields take a JSON number or a decimal string; enums take
//     their name or their number;
//   - bytes take standard or URL-safe base64, padded or not;
//   - unknown members are ignored (A2A 1.0 §5.7: implementations SHOULD
//     ignore unrecognized fields), wrong types are errors.

// decoder reads one document. Errors are *a2a.Error: InvalidParams naming
// the JSON Pointer of the offending value (prefixed with prefix, "/params"
// for JSON-RPC params), or ErrParse for a REST body that is not JSON.
type decoder struct {
	dec     *jsontext.Decoder
	buf     bytes.Buffer // the input, which dec reads in place
	prefix  string
	rest    bool   // a syntax error is ErrParse, not InvalidParams
	v03     bool   // the JSON of the A2A 0.3 proto (proto03.go), not 1.0's
	scratch []byte // unquoting escaped member names
}

// decoders keeps decoders for reuse: a jsontext.Decoder keeps its stacks
// (and a decoder costs a few hundred bytes to make).
var decoders = sync.Pool{New: func() any { return &decoder{dec: new(jsontext.Decoder)} }}

// newDecoder returns a decoder of raw; release returns it to the pool
// once nothing read from it refers to the decoder any more.
func newDecoder(raw []byte, prefix string, rest bool) *decoder {
	d := decoders.Get().(*decoder)
	d.buf = *bytes.NewBuffer(raw)
	d.dec.Reset(&d.buf)
	d.prefix, d.rest, d.v03 = prefix, rest, false
	return d
}

// release returns d to the pool.
func (d *decoder) release() {
	d.buf = bytes.Buffer{}
	d.dec.Reset(&d.buf)
	if cap(d.scratch) > 1<<10 {
		d.scratch = nil
	}
	decoders.Put(d)
}

// ptr is the JSON Pointer of the value read last (after an object or
// array closed: of that object or array).
func (d *decoder) ptr() string { return d.prefix + string(d.dec.StackPointer()) }

// fail reports reason about the value read last.
func (d *decoder) fail(reason string) error { return a2a.InvalidParams(d.ptr(), reason) }

// missing reports a required member of the object read last.
func (d *decoder) missing(name string) error {
	return a2a.InvalidParams(d.ptr()+"/"+name, "required field missing")
}

// required is missing(name) when value is "", else nil.
func (d *decoder) required(name, value string) error {
	if value == "" {
		return d.missing(name)
	}
	return nil
}

// wrap converts an error of jsontext or json/v2 into an *a2a.Error.
func (d *decoder) wrap(err error) error {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		msg := "invalid JSON: " + syn.Err.Error()
		if d.rest {
			return a2a.ErrParse.WithMessage("Invalid JSON payload: %s at %q", syn.Err.Error(), string(syn.JSONPointer))
		}
		return a2a.InvalidParams(d.prefix+string(syn.JSONPointer), msg)
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		return a2a.InvalidParams(d.prefix+string(sem.JSONPointer), "invalid value")
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.syntax("unexpected end of input")
	}
	return d.syntax(err.Error())
}

// syntax reports input that is not one JSON value.
func (d *decoder) syntax(what string) error {
	if d.rest {
		return a2a.ErrParse.WithMessage("Invalid JSON payload: %s", what)
	}
	return a2a.InvalidParams(d.ptr(), "invalid JSON: "+what)
}

// mismatch reads the next value and reports that it is not a want.
func (d *decoder) mismatch(want string) error {
	k := d.dec.PeekKind()
	if err := d.dec.SkipValue(); err != nil {
		return d.wrap(err)
	}
	return d.fail("unexpected JSON " + wirejson.KindName(k) + " (want " + want + ")")
}

// document decodes a whole document with read: absent or null input reads
// as {} when emptyOK (a request whose fields are all optional); anything
// after the value is an error.
func (d *decoder) document(raw []byte, emptyOK bool, read func() error) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		if emptyOK {
			d.buf = *bytes.NewBufferString("{}")
			d.dec.Reset(&d.buf)
		} else if d.rest && len(trimmed) == 0 {
			return a2a.ErrParse.WithMessage("Invalid JSON payload: the request body is empty")
		} else {
			return a2a.InvalidParams(d.prefix, "a JSON object is required")
		}
	}
	if k := d.dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := d.dec.ReadToken()
			return d.wrap(err)
		}
		if err := d.dec.SkipValue(); err != nil {
			return d.wrap(err)
		}
		return a2a.InvalidParams(d.prefix, "unexpected JSON "+wirejson.KindName(k)+" (want object)")
	}
	if err := read(); err != nil {
		return err
	}
	if _, err := d.dec.ReadToken(); err == nil {
		return d.syntax("unexpected data after the top-level value")
	} else if !errors.Is(err, io.EOF) {
		return d.wrap(err)
	}
	return nil
}

// readDocument reads raw, a whole document, with read and returns its
// value: the zero T and the error when either fails. emptyOK is
// document's.
func readDocument[T any](d *decoder, raw []byte, emptyOK bool, read func() (T, error)) (T, error) {
	var v T
	err := d.document(raw, emptyOK, func() error {
		var err error
		v, err = read()
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// readObject reads raw, a whole document, as one object of table f:
// member reads the value of each known member, by JSON name; check, when
// not nil, judges what was read once every member is (a required member
// absent). emptyOK is document's.
func (d *decoder) readObject(raw []byte, emptyOK bool, f *fields, member func(name string) error, check func() error) error {
	return d.document(raw, emptyOK, func() error {
		if _, err := d.object(f, member); err != nil || check == nil {
			return err
		}
		return check()
	})
}

// orZero returns v, or T's zero value with err when err is not nil.
func orZero[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// fields is the member table of one message type.
type fields struct {
	names    []string       // lowerCamelCase JSON names
	index    map[string]int // JSON and proto names → position in names
	nullable uint64         // members whose null is a value
	proto    []string       // proto names (snake_case)
}

// newFields builds a table of names not in the proto (google.rpc
// objects, the 0.3 REST error); a name ending in "?" is nullable. Its
// proto names are the snake_case of the JSON names.
func newFields(names ...string) *fields {
	f := &fields{}
	for _, n := range names {
		nullable := strings.HasSuffix(n, "?")
		n = strings.TrimSuffix(n, "?")
		f.add(n, snakeCase(n), nullable)
	}
	return f.done()
}

// protoFields builds the table of the A2A 1.0 messages named msgs (one, or
// the members of several that are read as one object), in field order,
// from the proto (package a2aproto): a google.protobuf.Value member is
// nullable, as ProtoJSON reads a null there as a value. extra are members
// outside the proto, each with a note where the table is declared.
func protoFields(msgs []string, extra ...string) *fields {
	f := &fields{}
	for _, name := range msgs {
		for _, fd := range a2aproto.Lookup(name).Fields {
			if _, dup := f.index[fd.JSON]; !dup {
				f.add(fd.JSON, fd.Proto, fd.Type == "google.protobuf.Value")
			}
		}
	}
	for _, n := range extra {
		f.add(n, snakeCase(n), false)
	}
	return f.done()
}

// message is protoFields of the one message name.
func message(name string, extra ...string) *fields { return protoFields([]string{name}, extra...) }

// add appends a member by its JSON and proto names.
func (f *fields) add(json, proto string, nullable bool) {
	if f.index == nil {
		f.index = make(map[string]int)
	}
	i := len(f.names)
	if nullable {
		f.nullable |= 1 << i
	}
	f.names = append(f.names, json)
	f.proto = append(f.proto, proto)
	f.index[json] = i
	f.index[proto] = i
}

// done checks the table fits the decoder's 64-bit member sets.
func (f *fields) done() *fields {
	if len(f.names) > 64 {
		panic("v10: too many fields")
	}
	return f
}

// snakeCase turns a lowerCamelCase JSON name into its proto field name.
func snakeCase(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lookup finds the member named by the quoted name raw.
func (d *decoder) lookup(f *fields, raw []byte) (int, bool) {
	var name []byte
	if bytes.IndexByte(raw, '\\') < 0 {
		name = raw[1 : len(raw)-1]
	} else {
		var err error
		if d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], raw); err != nil {
			return 0, false
		}
		name = d.scratch
	}
	i, ok := f.index[string(name)]
	return i, ok
}

// object reads an object of type f, calling fn with the JSON name of each
// known member whose value is not null (or is null and nullable); fn must
// read the value. Unknown members are skipped. A null object reads as
// absent (present false).
func (d *decoder) object(f *fields, fn func(name string) error) (present bool, err error) {
	switch d.dec.PeekKind() {
	case 'n':
		_, err := d.dec.ReadToken()
		return false, d.wrapNil(err)
	case '{':
	default:
		return false, d.mismatch("object")
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return false, d.wrap(err)
	}
	var seen uint64
	for d.dec.PeekKind() != '}' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return false, d.wrap(err)
		}
		i, ok := d.lookup(f, raw)
		if !ok {
			if err := d.dec.SkipValue(); err != nil {
				return false, d.wrap(err)
			}
			continue
		}
		if seen&(1<<i) != 0 {
			if err := d.dec.SkipValue(); err != nil {
				return false, d.wrap(err)
			}
			return false, d.fail("field given twice (as " + f.names[i] + " and as " + f.proto[i] + ")")
		}
		seen |= 1 << i
		if d.dec.PeekKind() == 'n' && f.nullable&(1<<i) == 0 {
			if _, err := d.dec.ReadToken(); err != nil {
				return false, d.wrap(err)
			}
			continue
		}
		if err := fn(f.names[i]); err != nil {
			return false, err
		}
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return false, d.wrap(err)
	}
	return true, nil
}

func (d *decoder) wrapNil(err error) error {
	if err != nil {
		return d.wrap(err)
	}
	return nil
}

// array reads an array, calling fn for each element; fn must read it. A
// null array reads as absent.
func (d *decoder) array(fn func() error) (present bool, err error) {
	switch d.dec.PeekKind() {
	case 'n':
		_, err := d.dec.ReadToken()
		return false, d.wrapNil(err)
	case '[':
	default:
		return false, d.mismatch("array")
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return false, d.wrap(err)
	}
	for d.dec.PeekKind() != ']' {
		if d.dec.PeekKind() == 0 {
			_, err := d.dec.ReadToken()
			return false, d.wrap(err)
		}
		if err := fn(); err != nil {
			return false, err
		}
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return false, d.wrap(err)
	}
	return true, nil
}

// element requires an object (not null) as the next array element.
func (d *decoder) element() error {
	if d.dec.PeekKind() == 'n' {
		return d.mismatch("object")
	}
	return nil
}

// str reads a string.
func (d *decoder) str() (string, error) {
	if d.dec.PeekKind() != '"' {
		return "", d.mismatch("string")
	}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return "", d.wrap(err)
	}
	return tok.String(), nil
}

// boolean reads true or false.
func (d *decoder) boolean() (bool, error) {
	switch d.dec.PeekKind() {
	case 't', 'f':
		tok, err := d.dec.ReadToken()
		if err != nil {
			return false, d.wrap(err)
		}
		return tok.Bool(), nil
	}
	return false, d.mismatch("boolean")
}

// int32 reads an int32: a JSON number or a decimal string (ProtoJSON).
func (d *decoder) int32() (int, error) {
	var text string
	switch d.dec.PeekKind() {
	case '0':
		v, err := d.dec.ReadValue()
		if err != nil {
			return 0, d.wrap(err)
		}
		text = string(v)
	case '"':
		tok, err := d.dec.ReadToken()
		if err != nil {
			return 0, d.wrap(err)
		}
		text = tok.String()
	default:
		return 0, d.mismatch("integer")
	}
	n, reason := parseInt32(text)
	if reason != "" {
		return 0, d.fail(reason)
	}
	return n, nil
}

// parseInt32 parses an int32 written as a JSON number (an integral value
// such as 5, 5.0 or 5e0) or its decimal text; reason says why it is not one.
func parseInt32(s string) (int, string) {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int(n), ""
	}
	if !wirejson.ValidNumber(s) {
		return 0, "not an integer: " + strconv.Quote(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) {
		return 0, "not an integer: " + s
	}
	if f < math.MinInt32 || f > math.MaxInt32 {
		return 0, "out of range for int32: " + s
	}
	return int(f), ""
}

// nonNegative reads an int32 that must be >= 0.
func (d *decoder) nonNegative() (*int, error) {
	n, err := d.int32()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, d.fail("must not be negative")
	}
	return &n, nil
}

// enum reads an enum by name or number; names[i] is the name of number i.
// what names the enum in the error ("task state").
func (d *decoder) enum(names []string, what string) (int, error) {
	switch d.dec.PeekKind() {
	case '"':
		tok, err := d.dec.ReadToken()
		if err != nil {
			return 0, d.wrap(err)
		}
		s := tok.String()
		for i, n := range names {
			if n == s {
				return i, nil
			}
		}
		return 0, d.fail("unknown " + what + " " + strconv.Quote(s))
	case '0':
		v, err := d.dec.ReadValue()
		if err != nil {
			return 0, d.wrap(err)
		}
		n, reason := parseInt32(string(v))
		if reason != "" || n < 0 || n >= len(names) {
			return 0, d.fail("unknown " + what + " " + string(v))
		}
		return n, nil
	}
	return 0, d.mismatch(what + " name")
}

// structValue reads a google.protobuf.Struct: a JSON object whose numbers
// stay exact (json.Number).
func (d *decoder) structValue() (map[string]any, error) {
	if d.dec.PeekKind() != '{' {
		return nil, d.mismatch("object")
	}
	var m map[string]any
	if err := json.UnmarshalDecode(d.dec, &m, wirejson.DecodeOptions); err != nil {
		return nil, d.wrap(err)
	}
	return m, nil
}

// value reads any JSON value (google.protobuf.Value).
func (d *decoder) value() (any, error) {
	var v any
	if err := json.UnmarshalDecode(d.dec, &v, wirejson.DecodeOptions); err != nil {
		return nil, d.wrap(err)
	}
	return v, nil
}

// strs reads an array of strings.
func (d *decoder) strs() ([]string, error) {
	var out []string
	_, err := d.array(func() error {
		s, err := d.str()
		out = append(out, s)
		return err
	})
	return out, err
}

// timestamp reads an RFC 3339 timestamp (google.protobuf.Timestamp),
// returned in UTC.
func (d *decoder) timestamp() (time.Time, error) {
	s, err := d.str()
	if err != nil {
		return time.Time{}, err
	}
	t, reason := parseTimestamp(s)
	if reason != "" {
		return time.Time{}, d.fail(reason)
	}
	return t, nil
}

// parseTimestamp parses an RFC 3339 date-time with a "Z" or numeric
// offset (two-digit fields: time.Parse alone takes "T0:00:00"), within
// google.protobuf.Timestamp's range, years 0001 to 9999 in UTC.
func parseTimestamp(s string) (time.Time, string) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, "not an RFC 3339 timestamp: " + strconv.Quote(s)
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, "timestamp out of range (years 0001 to 9999 in UTC): " + strconv.Quote(s)
	}
	return t, ""
}
