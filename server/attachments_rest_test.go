package server_test

import (
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/testutil"
)

// Over HTTP+JSON (A2A 1.0), a raw part becomes a url part too.
func TestAttachmentsREST10(t *testing.T) {
	f := newAttachFixture(t)
	body := `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain","filename":"x.txt"}]}}`
	resp, b := testutil.Post(t, f.ts.URL+"/a2a/files/message:send", body, "A2A-Version", "1.0", "Authorization", "Bearer alice-token")
	want := `"url":"` + f.ts.URL + `/api/attachments/`
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) || strings.Contains(string(b), `"raw"`) {
		t.Fatalf("%d %s: want a part with %s…", resp.StatusCode, b, want)
	}
	<-f.seen
}
