package conversation_test

import (
	"encoding/base64"
	"testing"

	"github.com/a2abridge/a2abridge/bridge/conversation"
)

// FuzzDecodeConfig64: any input decodes to a valid scenario that encodes
// and decodes to itself, or to an error; never a panic.
func FuzzDecodeConfig64(f *testing.F) {
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(good)))
	f.Add(base64.URLEncoding.EncodeToString([]byte(good)))
	f.Add("e30")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := conversation.DecodeConfig64(in, 4096)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid scenario: %v", err)
		}
		back, err := conversation.DecodeConfig64(conversation.EncodeConfig64(s), 1<<20)
		if err != nil || string(back.JSON()) != string(s.JSON()) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzParseJSON: the scenario JSON decoder and Validate never panic, and
// an accepted scenario passes the allowlist check without panicking.
func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"title":"T","agents":[{"id":"me","external":true},{"id":"b","kind":"x","config":{"a":[{"url":"http://h/"}]}}],"startingAgentId":"me","rules":{"turnPolicy":"moderator","moderatorId":"b","maxTurns":3,"turnTimeout":"1s","onParticipantFailure":"skip"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := conversation.ParseJSON(b)
		if err != nil {
			return
		}
		_ = conversation.Allow{Kinds: []string{"x"}, URLs: []string{"http://h"}}.Check(s)
		if _, err := conversation.ParseJSON(s.JSON()); err != nil {
			t.Fatalf("re-parse of %s: %v", s.JSON(), err)
		}
	})
}
