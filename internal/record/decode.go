package record

import (
	stdjson "encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/internal/wire/wirejson"
)

// decoder reads a record from s, a copy of the input that the decoded
// strings share. Its first error sticks: it then moves to the end of s,
// so that every later read fails at once and returns a zero value, and
// the caller reports the error once it is done.
type decoder struct {
	s     string
	i     int
	err   error
	depth int
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d: %s", ErrCorrupt, d.i, fmt.Sprintf(format, args...))
	}
	d.i = len(d.s)
}

// end reports the first error, or an error for bytes after the body.
func (d *decoder) end() error {
	if d.err == nil && d.i != len(d.s) {
		d.fail("%d bytes after the record", len(d.s)-d.i)
	}
	return d.err
}

func (d *decoder) byte() byte {
	if d.i >= len(d.s) {
		d.fail("truncated")
		return 0
	}
	c := d.s[d.i]
	d.i++
	return c
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	if d.err == nil {
		d.fail("bool byte is not 0 or 1")
	}
	return false
}

// uvarint reads an unsigned LEB128 number in its shortest form (so that
// a record has one encoding).
func (d *decoder) uvarint() uint64 {
	if d.i < len(d.s) && d.s[d.i] < 0x80 {
		c := d.s[d.i]
		d.i++
		return uint64(c)
	}
	var x uint64
	var shift uint
	for k := 0; k < 10; k++ {
		if d.i >= len(d.s) {
			d.fail("truncated")
			return 0
		}
		c := d.s[d.i]
		d.i++
		if c < 0x80 {
			if c == 0 && k > 0 || k == 9 && c > 1 {
				d.fail("malformed varint")
				return 0
			}
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	d.fail("malformed varint")
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a length or element count, which cannot exceed the bytes
// left (every element takes at least one).
func (d *decoder) count() int { return d.countOf(1) }

// countOf reads the count of elements that take at least size bytes
// each: a count the bytes left cannot hold is an error, so that garbage
// never makes the decoder allocate much more than its input.
func (d *decoder) countOf(size int) int {
	n := d.uvarint()
	if n > uint64((len(d.s)-d.i)/size) {
		d.fail("count %d beyond the end", n)
		return 0
	}
	return int(n)
}

// raw reads a length-prefixed run of bytes as a substring of s.
func (d *decoder) raw() string {
	n := d.count()
	v := d.s[d.i : d.i+n]
	d.i += n
	return v
}

func (d *decoder) str() string {
	v := d.raw()
	if !utf8.ValidString(v) {
		d.fail("string is not valid UTF-8")
		return ""
	}
	return v
}

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// meta reads a map; an empty one is nil.
func (d *decoder) meta() map[string]any {
	n := d.count()
	if n == 0 {
		return nil
	}
	return d.mapBody(n)
}

func (d *decoder) mapBody(n int) map[string]any {
	m := make(map[string]any, n)
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		if i > 0 && k <= prev {
			d.fail("map keys out of order")
			return nil
		}
		prev = k
		m[k] = d.value()
	}
	return m
}

func (d *decoder) value() any {
	switch tag := d.byte(); tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagString:
		return d.str()
	case tagNumber:
		v := d.raw()
		if !wirejson.ValidNumber(v) {
			d.fail("number %q", v)
			return nil
		}
		return stdjson.Number(v)
	case tagArray:
		if !d.enter() {
			return nil
		}
		a := make([]any, d.count())
		for i := 0; i < len(a) && d.err == nil; i++ {
			a[i] = d.value()
		}
		d.depth--
		return a
	case tagObject:
		if !d.enter() {
			return nil
		}
		m := d.mapBody(d.count())
		d.depth--
		return m
	default:
		if d.err == nil {
			d.fail("value tag %d", tag)
		}
		return nil
	}
}

func (d *decoder) enter() bool {
	if d.depth >= maxDepth {
		d.fail("values nest deeper than %d levels", maxDepth)
		return false
	}
	d.depth++
	return true
}

// The fewest bytes a message, an artifact and a part take.
const (
	minMessage  = 8
	minArtifact = 6
	minPart     = 5
)

func (d *decoder) parts() []a2a.Part {
	ps := make([]a2a.Part, d.countOf(minPart))
	for i := 0; i < len(ps) && d.err == nil; i++ {
		switch tag := d.byte(); tag {
		case partText:
			ps[i] = a2a.Part{Content: a2a.Text(d.str()), MediaType: d.str(), Filename: d.str(), Metadata: d.meta()}
		case partFile:
			// A file without bytes and without a URI (written by
			// earlier versions) is the empty file.
			var p a2a.Part
			p.Filename = d.str()
			p.MediaType = d.str()
			var raw []byte
			if d.bool() {
				v := d.raw()
				raw = make([]byte, len(v))
				copy(raw, v)
			}
			if uri := d.str(); raw == nil && uri != "" {
				p.Content = a2a.URL(uri)
			} else {
				if raw == nil {
					raw = []byte{}
				}
				p.Content = a2a.Raw(raw)
			}
			p.Metadata = d.meta()
			ps[i] = p
		case partData:
			ps[i] = a2a.Part{Content: a2a.Data{Value: d.value()}, MediaType: d.str(), Filename: d.str(), Metadata: d.meta()}
		default:
			if d.err == nil {
				d.fail("part tag %d", tag)
			}
		}
	}
	return ps
}

func (d *decoder) message(m *a2a.Message) {
	m.MessageID = d.str()
	m.Role = a2a.Role(d.str())
	m.Parts = d.parts()
	m.ContextID = d.str()
	m.TaskID = d.str()
	m.ReferenceTaskIDs = d.strs()
	m.Extensions = d.strs()
	m.Metadata = d.meta()
}

func (d *decoder) status(s *a2a.TaskStatus) {
	name := d.str()
	st, ok := ParseStateName(name)
	if !ok && d.err == nil {
		d.fail("task state %q", name)
	}
	s.State = st
	flags := d.byte()
	if flags&^(statusMessage|statusTimestamp) != 0 {
		d.fail("status flags %#x", flags)
		return
	}
	if flags&statusMessage != 0 {
		s.Message = new(a2a.Message)
		d.message(s.Message)
	}
	if flags&statusTimestamp != 0 {
		sec := d.varint()
		nsec := d.uvarint()
		if d.err != nil {
			return
		}
		if sec < minUnix || sec > maxUnix || nsec >= 1e9 || sec == minUnix && nsec == 0 {
			d.fail("timestamp %d.%09d", sec, nsec)
			return
		}
		s.Timestamp = time.Unix(sec, int64(nsec)).UTC()
	}
}

func (d *decoder) artifact(a *a2a.Artifact) {
	a.ArtifactID = d.str()
	a.Name = d.str()
	a.Description = d.str()
	a.Parts = d.parts()
	a.Extensions = d.strs()
	a.Metadata = d.meta()
}

func (d *decoder) task(t *a2a.Task) {
	t.ID = d.str()
	t.ContextID = d.str()
	d.status(&t.Status)
	if n := d.countOf(minMessage); n > 0 {
		t.History = make([]a2a.Message, n)
		for i := 0; i < n && d.err == nil; i++ {
			d.message(&t.History[i])
		}
	}
	if n := d.countOf(minArtifact); n > 0 {
		t.Artifacts = make([]a2a.Artifact, n)
		for i := 0; i < n && d.err == nil; i++ {
			d.artifact(&t.Artifacts[i])
		}
	}
	t.Metadata = d.meta()
}
