package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// FuzzAttachmentURL: attachmentIDOf finds the id of every attachment URL
// and, in anything else, only a valid id; tenantOfOwner gives back the
// tenant of every owner key Handler.owner makes.
func FuzzAttachmentURL(f *testing.F) {
	f.Add("http://h/api/attachments/abc/content", "tenant")
	f.Add("/api/attachments//content", `t"x`)
	f.Add("/api/attachments/a/b/content", "\xff\"/")
	f.Fuzz(func(t *testing.T, s, tenant string) {
		if id := attachmentIDOf(s); id != "" && (!validAttachmentID(id) || !strings.Contains(s, id)) {
			t.Fatalf("attachmentIDOf(%q) = %q", s, id)
		}
		id := newAttachmentID()
		if got := attachmentIDOf(s + AttachmentsPath + "/" + id + "/content"); got != id {
			t.Fatalf("attachmentIDOf(…%s) = %q", id, got)
		}
		h := &AgentHandler{}
		key, _ := h.owner(withTenant(context.Background(), tenant))
		for _, k := range []string{key, key + fmt.Sprintf("%q/%q/%q", "bearer", "", s)} {
			if got := tenantOfOwner(k); got != tenant {
				t.Fatalf("tenantOfOwner(%q) = %q, want %q", k, got, tenant)
			}
		}
	})
}
