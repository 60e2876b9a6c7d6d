package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a2abridge/a2abridge/internal/attachment"
)

// FuzzAttachmentURL: attachment.IDOf finds the id of every attachment URL
// and, in anything else, only a valid id; tenantOfOwner gives back the
// tenant of every owner key Handler.owner makes.
func FuzzAttachmentURL(f *testing.F) {
	f.Add("http://h/api/attachments/abc/content", "tenant")
	f.Add("/api/attachments//content", `t"x`)
	f.Add("/api/attachments/a/b/content", "\xff\"/")
	f.Fuzz(func(t *testing.T, s, tenant string) {
		if id := attachment.IDOf(s); id != "" && (!attachment.ValidID(id) || !strings.Contains(s, id)) {
			t.Fatalf("attachment.IDOf(%q) = %q", s, id)
		}
		id := attachment.NewID()
		if got := attachment.IDOf(s + AttachmentsPath + "/" + id + "/content"); got != id {
			t.Fatalf("attachment.IDOf(…%s) = %q", id, got)
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
