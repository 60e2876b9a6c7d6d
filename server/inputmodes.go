package server

import (
	"strconv"
	"strings"

	"github.com/a2abridge/a2abridge/internal/binding/edge"

	"github.com/a2abridge/a2abridge/a2a"
)

// inputModes is what an agent accepts in the parts of a message (A2A 1.0
// §3.1.1, ContentTypeNotSupportedError), worked out once by NewHandler.
// A request names no skill (A2A 1.0 has no field for it), so a part is
// accepted when its media type matches the card's defaultInputModes or
// the inputModes of any of its skills. A mode that is a bare type
// ("text", which some cards write) stands for the whole type ("text/*").
type inputModes struct {
	// all is true when every media type is accepted: the card has no
	// defaultInputModes, or one of the modes is "*/*" (or "*").
	all   bool
	modes []string // trimmed, lower case, each once
	list  string   // modes, comma-separated, for the error
}

func newInputModes(card a2a.AgentCard) inputModes {
	if len(card.DefaultInputModes) == 0 {
		return inputModes{all: true}
	}
	var im inputModes
	add := func(ms []string) {
		for _, m := range ms {
			m = strings.ToLower(strings.TrimSpace(m))
			if i := strings.IndexByte(m, ';'); i >= 0 {
				m = strings.TrimSpace(m[:i])
			}
			if m == "*/*" || m == "*" {
				im.all = true
			}
			if m != "" && !strings.Contains(m, "/") {
				// A bare type, as some cards write ("text"): the whole type.
				m += "/*"
			}
			if m != "" && !contains(im.modes, m) {
				im.modes = append(im.modes, m)
			}
		}
	}
	add(card.DefaultInputModes)
	for _, s := range card.Skills {
		add(s.InputModes)
	}
	if im.all {
		return inputModes{all: true}
	}
	im.list = strings.Join(im.modes, ", ")
	return im
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// partMediaType is the media type a part is checked as: a text part's
// mediaType, else text/plain; a data part's, else application/json; a
// file part's (raw or url), else "" (a file of unstated type is not
// refused: nothing says it is of a type the agent does not take).
// Parameters ("; charset=utf-8") are cut off.
func partMediaType(p a2a.Part) string {
	mt := p.MediaType
	if mt == "" {
		switch p.Content.(type) {
		case a2a.Text:
			return "text/plain"
		case a2a.Data:
			return "application/json"
		}
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return strings.TrimSpace(mt)
}

// check returns ContentTypeNotSupportedError (-32005; A2A 1.0 §3.1.1,
// §5.4: HTTP 400) for the first part of msg whose media type the agent
// does not accept, naming the part, its type and the accepted ones (also
// in the error's data: "mediaType" and "acceptedInputModes",
// comma-separated); nil when every part is accepted. Wildcards in the
// card's modes ("text/*") match as mediaMatch says; a part whose type is
// a wildcard is accepted only by a card that takes everything.
func (im *inputModes) check(msg *a2a.Message) error {
	if im.all {
		return nil
	}
	for i, p := range msg.Parts {
		mt := partMediaType(p)
		if mt == "" {
			continue
		}
		ok := false
		// A part's type is a concrete one: a wildcard there ("*/*",
		// "image/*") is no type the card's modes can vouch for (only a
		// card that takes everything, im.all, takes it).
		for _, m := range im.modes {
			if !strings.ContainsRune(mt, '*') && mediaMatch(mt, m) {
				ok = true
				break
			}
		}
		if !ok {
			return a2a.ErrContentTypeNotSupported.WithMessage(
				"Incompatible content types: part %d of the message is %s; the agent accepts %s", i, edge.PrintableASCII(mt, 100), im.list).
				WithData(map[string]any{"field": "/params/message/parts/" + strconv.Itoa(i), "mediaType": edge.PrintableASCII(mt, 100), "acceptedInputModes": im.list})
		}
	}
	return nil
}
