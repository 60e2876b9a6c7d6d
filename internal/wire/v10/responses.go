package v10

import (
	"github.com/a2abridge/a2abridge/a2a"
)

// Response decoders, for a client of A2A 1.0: each takes the JSON-RPC
// "result" (or the HTTP+JSON response body). Errors are *a2a.Error
// InvalidParams (-32602) naming the offending field by its JSON Pointer,
// as v03's decoders report them; a caller that received the document from
// a server may prefer to report ErrInvalidAgentResponse.

// UnmarshalTask decodes a Task (A2A 1.0 §4.1.1): the result of GetTask
// and CancelTask.
func UnmarshalTask(b []byte) (a2a.Task, error) {
	return unmarshalTask(b, false)
}

// unmarshalTask decodes a Task of A2A 1.0 or, with v03, of the 0.3 proto.
func unmarshalTask(b []byte, v03 bool) (a2a.Task, error) {
	d := newDecoder(b, "", false)
	d.v03 = v03
	defer d.release()
	return readDocument(d, b, false, func() (a2a.Task, error) {
		t, _, err := d.task()
		return t, err
	})
}

// UnmarshalMessage decodes a Message (A2A 1.0 §4.1.4).
func UnmarshalMessage(b []byte) (a2a.Message, error) {
	d := newDecoder(b, "", false)
	defer d.release()
	return readDocument(d, b, false, func() (a2a.Message, error) {
		m, _, err := d.message(false)
		return m, err
	})
}

// UnmarshalSendMessageResponse decodes a SendMessageResponse (A2A 1.0
// §9.4.1): a *a2a.Task or a *a2a.Message.
func UnmarshalSendMessageResponse(b []byte) (a2a.Event, error) {
	return unmarshalStream(b, true, false)
}

// UnmarshalStreamResponse decodes a StreamResponse (A2A 1.0 §3.2.3), one
// frame of a stream or a push notification's body: *a2a.Task,
// *a2a.Message, *a2a.TaskStatusUpdateEvent (Final is true on a terminal or
// interrupted state, or when the frame says "final": true) or
// *a2a.TaskArtifactUpdateEvent. A frame {"error": {…}} (an HTTP+JSON
// stream ending in an error) is returned as a *StreamError holding the
// server's error.
func UnmarshalStreamResponse(b []byte) (a2a.Event, error) {
	return unmarshalStream(b, false, false)
}

// unmarshalStream decodes a StreamResponse (or, with onlyTaskOrMessage, a
// SendMessageResponse) of A2A 1.0 or, with v03, of the 0.3 proto.
func unmarshalStream(b []byte, onlyTaskOrMessage, v03 bool) (a2a.Event, error) {
	d := newDecoder(b, "", false)
	d.v03 = v03
	defer d.release()
	return readDocument(d, b, false, func() (a2a.Event, error) {
		return d.streamResponse(onlyTaskOrMessage)
	})
}

var listTasksResponseFields = message("ListTasksResponse")

// UnmarshalListTasksResponse decodes a ListTasksResponse (A2A 1.0 §3.1.4).
func UnmarshalListTasksResponse(b []byte) (a2a.ListTasksResponse, error) {
	d := newDecoder(b, "", false)
	defer d.release()
	return d.listTasksResponse(b)
}

// listTasksResponse reads the document b, a ListTasksResponse.
func (d *decoder) listTasksResponse(b []byte) (a2a.ListTasksResponse, error) {
	r := a2a.ListTasksResponse{Tasks: []a2a.Task{}}
	err := d.readObject(b, false, listTasksResponseFields, func(name string) error {
		var err error
		switch name {
		case "tasks":
			_, err = d.array(func() error {
				if err := d.element(); err != nil {
					return err
				}
				t, _, err := d.task()
				r.Tasks = append(r.Tasks, t)
				return err
			})
		case "nextPageToken":
			r.NextPageToken, err = d.str()
		case "pageSize":
			r.PageSize, err = d.int32()
		case "totalSize":
			r.TotalSize, err = d.int32()
		}
		return err
	}, nil)
	return orZero(r, err)
}

// UnmarshalTaskPushNotificationConfig decodes a TaskPushNotificationConfig
// (A2A 1.0 §4.3.1): the result of Create and GetTaskPushNotificationConfig.
func UnmarshalTaskPushNotificationConfig(b []byte) (a2a.TaskPushNotificationConfig, error) {
	d := newDecoder(b, "", false)
	defer d.release()
	return readDocument(d, b, false, func() (a2a.TaskPushNotificationConfig, error) {
		c, _, err := d.pushConfig()
		return c, err
	})
}

var listPushConfigsResponseFields = message("ListTaskPushNotificationConfigsResponse")

// UnmarshalListTaskPushNotificationConfigsResponse decodes a
// ListTaskPushNotificationConfigsResponse (A2A 1.0 §3.1.9): the configs
// and the next page's token ("" on the last page).
func UnmarshalListTaskPushNotificationConfigsResponse(b []byte) ([]a2a.TaskPushNotificationConfig, string, error) {
	configs := []a2a.TaskPushNotificationConfig{}
	var next string
	d := newDecoder(b, "", false)
	defer d.release()
	err := d.readObject(b, false, listPushConfigsResponseFields, func(name string) error {
		var err error
		switch name {
		case "configs":
			_, err = d.array(func() error {
				if err := d.element(); err != nil {
					return err
				}
				c, _, err := d.pushConfig()
				configs = append(configs, c)
				return err
			})
		case "nextPageToken":
			next, err = d.str()
		}
		return err
	}, nil)
	if err != nil {
		return nil, "", err
	}
	return configs, next, nil
}
