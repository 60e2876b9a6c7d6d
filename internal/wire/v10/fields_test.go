package v10

import (
	"slices"
	"testing"
)

// TestFieldsFromProto checks the member tables built from the proto where
// decoding depends on them: both names of a member, the nullable Value,
// the members outside the proto, and the union of the scheme messages.
func TestFieldsFromProto(t *testing.T) {
	at := func(f *fields, name string) int {
		t.Helper()
		i, ok := f.index[name]
		if !ok {
			t.Fatalf("no member %q in %v", name, f.names)
		}
		return i
	}
	if i := at(partFields, "data"); partFields.nullable&(1<<i) == 0 {
		t.Error("Part.data is not nullable")
	}
	if i := at(partFields, "mediaType"); partFields.nullable&(1<<i) != 0 || at(partFields, "media_type") != i {
		t.Error("Part.mediaType: wrong table entry")
	}
	for _, f := range []struct {
		f     *fields
		extra string
	}{{partFields, "kind"}, {partFields, "file"}, {statusUpdateFields, "final"}, {streamFields, "error"}} {
		at(f.f, f.extra)
	}
	if want := []string{"description", "location", "name", "scheme", "bearerFormat", "flows", "oauth2MetadataUrl", "openIdConnectUrl"}; !slices.Equal(schemeBodyFields.names, want) {
		t.Errorf("scheme members %v, want %v", schemeBodyFields.names, want)
	}
	if at(flowFields, "device_authorization_url") != at(flowFields, "deviceAuthorizationUrl") {
		t.Error("flow: proto and JSON names differ in position")
	}
	for _, f := range []*fields{cardFields, taskFields, messageFields, listTasksFields, sendConfigFields} {
		for i, n := range f.names {
			if f.proto[i] != snakeCase(n) {
				t.Errorf("%s: proto name %s", n, f.proto[i])
			}
		}
	}
}
