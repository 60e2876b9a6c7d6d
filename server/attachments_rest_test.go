package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Over HTTP+JSON (A2A 1.0), a raw part becomes a url part too.
func TestAttachmentsREST10(t *testing.T) {
	f := newAttachFixture(t)
	body := `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain","filename":"x.txt"}]}}`
	req, _ := http.NewRequest("POST", f.ts.URL+"/a2a/files/message:send", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer alice-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `"url":"` + f.ts.URL + `/api/attachments/`
	if resp.StatusCode != 200 || !strings.Contains(string(b), want) || strings.Contains(string(b), `"raw"`) {
		t.Fatalf("%d %s: want a part with %s…", resp.StatusCode, b, want)
	}
	<-f.seen
}
