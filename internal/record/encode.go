package record

import (
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// The encoder appends straight into the caller's buffer: no intermediate
// structs, no reflection (but for values of types outside the JSON data
// model, see normalize). Its first error sticks; later writes go on and
// their output is dropped by the caller.

var (
	errInvalidUTF8 = errors.New("record: string is not valid UTF-8")
	errBadNumber   = errors.New("record: a json.Number holds text that is not a JSON number")
	errNonFinite   = errors.New("record: a value holds a non-finite number")
	errTooDeep     = errors.New("record: a value nests deeper than 10000 levels")
	errTime        = errors.New("record: timestamp outside years 1 to 9999")
)

// Timestamps are kept from year 1 to year 9999 (what RFC 3339 can write).
const (
	minUnix = -62135596800 // 0001-01-01T00:00:00Z
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
)

type encoder struct {
	b     []byte
	err   error
	depth int
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *encoder) uvarint(n uint64) {
	if n < 0x80 {
		e.b = append(e.b, byte(n))
		return
	}
	e.b = binary.AppendUvarint(e.b, n)
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// str appends s (str in the format).
func (e *encoder) str(s string) {
	if !utf8.ValidString(s) {
		e.fail(errInvalidUTF8)
	}
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) strs(ss []string) {
	e.uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// meta appends a metadata map (map in the format; nil and empty alike).
func (e *encoder) meta(m map[string]any) {
	switch len(m) {
	case 0:
		e.b = append(e.b, 0)
		return
	case 1:
		e.b = append(e.b, 1)
		for k, v := range m {
			e.str(k)
			e.value(v)
		}
		return
	}
	var buf [16]string
	keys := buf[:0]
	if len(m) > len(buf) {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.value(m[k])
	}
}

// Value tags.
const (
	tagNull   = 0
	tagFalse  = 1
	tagTrue   = 2
	tagString = 3
	tagNumber = 4
	tagArray  = 5
	tagObject = 6
)

// numberStart begins a number value whose text the caller appends
// (at most 127 bytes long, as every number this encoder formats is);
// numberEnd completes it.
func (e *encoder) numberStart() int {
	e.b = append(e.b, tagNumber, 0)
	return len(e.b)
}

func (e *encoder) numberEnd(at int) { e.b[at-1] = byte(len(e.b) - at) }

func (e *encoder) intNum(v int64) {
	at := e.numberStart()
	e.b = strconv.AppendInt(e.b, v, 10)
	e.numberEnd(at)
}

func (e *encoder) uintNum(v uint64) {
	at := e.numberStart()
	e.b = strconv.AppendUint(e.b, v, 10)
	e.numberEnd(at)
}

// value appends v in the JSON data model (see the package doc).
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, tagNull)
	case bool:
		if v {
			e.b = append(e.b, tagTrue)
		} else {
			e.b = append(e.b, tagFalse)
		}
	case string:
		e.b = append(e.b, tagString)
		e.str(v)
	case stdjson.Number:
		if !wirejson.ValidNumber(string(v)) {
			e.fail(errBadNumber)
		}
		e.b = append(e.b, tagNumber)
		e.uvarint(uint64(len(v)))
		e.b = append(e.b, v...)
	case map[string]any:
		if e.enter() {
			e.b = append(e.b, tagObject)
			e.meta(v)
			e.depth--
		}
	case []any:
		if e.enter() {
			e.b = append(e.b, tagArray)
			e.uvarint(uint64(len(v)))
			for _, x := range v {
				e.value(x)
			}
			e.depth--
		}
	case []string:
		e.b = append(e.b, tagArray)
		e.uvarint(uint64(len(v)))
		for _, s := range v {
			e.b = append(e.b, tagString)
			e.str(s)
		}
	case float64:
		e.float(v, 64)
	case float32:
		e.float(float64(v), 32)
	case int:
		e.intNum(int64(v))
	case int64:
		e.intNum(v)
	case int32:
		e.intNum(int64(v))
	case int16:
		e.intNum(int64(v))
	case int8:
		e.intNum(int64(v))
	case uint:
		e.uintNum(uint64(v))
	case uint64:
		e.uintNum(v)
	case uint32:
		e.uintNum(uint64(v))
	case uint16:
		e.uintNum(uint64(v))
	case uint8:
		e.uintNum(uint64(v))
	default:
		n, err := normalize(v)
		if err != nil {
			e.fail(err)
			e.b = append(e.b, tagNull)
			return
		}
		e.value(n)
	}
}

// enter counts one more level of nesting, failing beyond maxDepth.
func (e *encoder) enter() bool {
	if e.depth >= maxDepth {
		e.fail(errTooDeep)
		e.b = append(e.b, tagNull)
		return false
	}
	e.depth++
	return true
}

// float appends f as json/v2 formats it: the shortest text that reads
// back the same, in exponent form below 1e-6 and from 1e21 on.
func (e *encoder) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(errNonFinite)
		e.b = append(e.b, tagNull)
		return
	}
	at := e.numberStart()
	e.b, _ = wirejson.AppendFloat(e.b, f, bits) // finite: cannot fail
	e.numberEnd(at)
}

// numberMarshaler writes a json.Number as its literal, which must be a
// JSON number; a number read into an `any` is a json.Number with its text
// (wirejson.DecodeOptions).
var (
	numberMarshaler = json.MarshalToFunc(func(enc *jsontext.Encoder, n stdjson.Number) error {
		if !wirejson.ValidNumber(string(n)) {
			return errBadNumber
		}
		return enc.WriteValue(jsontext.Value(n))
	})
	normalizeOpts = json.JoinOptions(json.Deterministic(true), json.WithMarshalers(numberMarshaler), wirejson.DecodeOptions)
)

// normalize turns a value of a type outside the JSON data model into the
// JSON data model, through its JSON (json/v2).
func normalize(v any) (any, error) {
	b, err := json.Marshal(v, normalizeOpts)
	if err != nil {
		return nil, fmt.Errorf("record: a value of type %T is not JSON: %w", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out, normalizeOpts); err != nil {
		return nil, fmt.Errorf("record: a value of type %T is not JSON: %w", v, err)
	}
	return out, nil
}

// Part tags.
const (
	partText = 1
	partFile = 2
	partData = 3
)

func (e *encoder) parts(ps []a2a.Part) {
	e.uvarint(uint64(len(ps)))
	for i := range ps {
		p := &ps[i]
		switch c := p.Content.(type) {
		case a2a.Text:
			e.b = append(e.b, partText)
			e.str(string(c))
			e.str(p.MediaType)
			e.str(p.Filename)
		case a2a.Raw:
			e.b = append(e.b, partFile)
			e.str(p.Filename)
			e.str(p.MediaType)
			e.bool(true)
			e.uvarint(uint64(len(c)))
			e.b = append(e.b, c...)
			e.str("")
		case a2a.URL:
			e.b = append(e.b, partFile)
			e.str(p.Filename)
			e.str(p.MediaType)
			e.bool(false)
			e.str(string(c))
		case a2a.Data:
			e.b = append(e.b, partData)
			e.value(c.Value)
			e.str(p.MediaType)
			e.str(p.Filename)
		default:
			e.fail(errors.New("record: part without content"))
			e.b = append(e.b, partText)
			e.str("")
			e.str("")
			e.str("")
		}
		e.meta(p.Metadata)
	}
}

func (e *encoder) message(m *a2a.Message) {
	e.str(m.MessageID)
	e.str(string(m.Role))
	e.parts(m.Parts)
	e.str(m.ContextID)
	e.str(m.TaskID)
	e.strs(m.ReferenceTaskIDs)
	e.strs(m.Extensions)
	e.meta(m.Metadata)
}

// Status flags.
const (
	statusMessage   = 1
	statusTimestamp = 2
)

func (e *encoder) status(s *a2a.TaskStatus) {
	if !s.State.Valid() {
		e.fail(fmt.Errorf("record: invalid task state %v", s.State))
	}
	e.str(StateName(s.State))
	var flags byte
	if s.Message != nil {
		flags |= statusMessage
	}
	if !s.Timestamp.IsZero() {
		flags |= statusTimestamp
	}
	e.b = append(e.b, flags)
	if s.Message != nil {
		e.message(s.Message)
	}
	if !s.Timestamp.IsZero() {
		e.time(s.Timestamp)
	}
}

func (e *encoder) time(t time.Time) {
	sec := t.Unix()
	if sec < minUnix || sec > maxUnix {
		e.fail(errTime)
	}
	e.b = binary.AppendVarint(e.b, sec)
	e.uvarint(uint64(t.Nanosecond()))
}

func (e *encoder) artifact(a *a2a.Artifact) {
	e.str(a.ArtifactID)
	e.str(a.Name)
	e.str(a.Description)
	e.parts(a.Parts)
	e.strs(a.Extensions)
	e.meta(a.Metadata)
}

func (e *encoder) task(t *a2a.Task) {
	e.str(t.ID)
	e.str(t.ContextID)
	e.status(&t.Status)
	e.uvarint(uint64(len(t.History)))
	for i := range t.History {
		e.message(&t.History[i])
	}
	e.uvarint(uint64(len(t.Artifacts)))
	for i := range t.Artifacts {
		e.artifact(&t.Artifacts[i])
	}
	e.meta(t.Metadata)
}
