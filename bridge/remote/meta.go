package remote

import "github.com/a2abridge/a2abridge/a2a"

// MetadataKey is the key of the task metadata under which an Agent keeps
// where the task lives at the remote, as a JSON object
//
//	{"taskId": "<remote task id>", "contextId": "<remote contextId>", "url": "<remote interface URL>"}
//
// It is written (by a working status-update carrying it as Metadata, which
// the engine folds into the task's metadata) as soon as the remote task id
// is known, and read back when the task continues (input-required →
// the next message goes to the same remote task) and when it is canceled.
const MetadataKey = "a2abridge/remote"

// Ref locates a task at the remote agent.
type Ref struct {
	// TaskID and ContextID are the remote task's ids.
	TaskID    string
	ContextID string
	// URL is the remote interface the task was created through.
	URL string
}

// metadata returns r as the value of MetadataKey.
func (r Ref) metadata() map[string]any {
	return map[string]any{"taskId": r.TaskID, "contextId": r.ContextID, "url": r.URL}
}

// RefOf reads the remote location of a task from its metadata (see
// MetadataKey). ok is false when the key is absent or malformed: not an
// object, or without a non-empty string taskId; contextId and url are
// optional strings (a member of another type is ignored).
func RefOf(task a2a.Task) (Ref, bool) {
	return refFrom(task.Metadata)
}

func refFrom(md map[string]any) (Ref, bool) {
	obj, ok := md[MetadataKey].(map[string]any)
	if !ok {
		return Ref{}, false
	}
	str := func(k string) string {
		s, _ := obj[k].(string)
		return s
	}
	r := Ref{TaskID: str("taskId"), ContextID: str("contextId"), URL: str("url")}
	if r.TaskID == "" {
		return Ref{}, false
	}
	return r, true
}
