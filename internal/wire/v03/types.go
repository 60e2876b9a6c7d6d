// Package v03 is the A2A 0.3.0 JSON wire encoding of the a2a domain model:
// "kind" discriminators, the Part union, FileWithBytes/FileWithUri, the
// security scheme union on "type", ISO 8601 timestamps, and strict,
// case-sensitive decoding with errors that name the offending field.
//
// Decoding errors are *a2a.Error with code -32602 and data
// {"field": <JSON Pointer>, "reason": ...}.
package v03

import (
	"github.com/go-json-experiment/json/jsontext"
)

// The wire structs mirror the definitions of a2a-v0.3.0.json. Optional
// scalars use omitempty; optional objects are pointers with omitzero;
// required fields carry no omit option so they are always emitted.

type messageJSON struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             string         `json:"role"`
	Parts            []partJSON     `json:"parts"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

type partJSON struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitzero"`
	File     *fileJSON       `json:"file,omitzero"`
	Data     *map[string]any `json:"data,omitzero"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

type fileJSON struct {
	Name     string  `json:"name,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
	Bytes    *string `json:"bytes,omitzero"`
	URI      *string `json:"uri,omitzero"`
}

type taskStatusJSON struct {
	State     string       `json:"state"`
	Message   *messageJSON `json:"message,omitzero"`
	Timestamp string       `json:"timestamp,omitempty"`
}

type artifactJSON struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []partJSON     `json:"parts"`
	Extensions  []string       `json:"extensions,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type taskJSON struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    taskStatusJSON `json:"status"`
	History   []messageJSON  `json:"history,omitempty"`
	Artifacts []artifactJSON `json:"artifacts,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type statusUpdateJSON struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    taskStatusJSON `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type artifactUpdateJSON struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  artifactJSON   `json:"artifact"`
	Append    bool           `json:"append,omitzero"`
	LastChunk bool           `json:"lastChunk,omitzero"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// eventJSON decodes any of the four event kinds in one pass.
type eventJSON struct {
	Kind string `json:"kind"`
	// message
	MessageID        string     `json:"messageId"`
	Role             string     `json:"role"`
	Parts            []partJSON `json:"parts"`
	ReferenceTaskIDs []string   `json:"referenceTaskIds"`
	Extensions       []string   `json:"extensions"`
	// task
	ID        string         `json:"id"`
	History   []messageJSON  `json:"history"`
	Artifacts []artifactJSON `json:"artifacts"`
	// shared
	ContextID string          `json:"contextId"`
	TaskID    string          `json:"taskId"`
	Status    *taskStatusJSON `json:"status"`
	Metadata  map[string]any  `json:"metadata"`
	// updates
	Final     bool          `json:"final"`
	Artifact  *artifactJSON `json:"artifact"`
	Append    bool          `json:"append"`
	LastChunk bool          `json:"lastChunk"`
}

type messageSendParamsJSON struct {
	Message       *messageJSON                  `json:"message"`
	Configuration *messageSendConfigurationJSON `json:"configuration,omitzero"`
	Metadata      map[string]any                `json:"metadata,omitempty"`
}

type messageSendConfigurationJSON struct {
	AcceptedOutputModes    []string                    `json:"acceptedOutputModes,omitempty"`
	Blocking               *bool                       `json:"blocking,omitzero"`
	HistoryLength          *int                        `json:"historyLength,omitzero"`
	PushNotificationConfig *pushNotificationConfigJSON `json:"pushNotificationConfig,omitzero"`
}

type pushNotificationConfigJSON struct {
	ID             string                                  `json:"id,omitempty"`
	URL            string                                  `json:"url"`
	Token          string                                  `json:"token,omitempty"`
	Authentication *pushNotificationAuthenticationInfoJSON `json:"authentication,omitzero"`
}

type pushNotificationAuthenticationInfoJSON struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

type taskPushNotificationConfigJSON struct {
	TaskID                 string                      `json:"taskId"`
	PushNotificationConfig *pushNotificationConfigJSON `json:"pushNotificationConfig"`
}

type taskQueryParamsJSON struct {
	ID            *string        `json:"id"`
	HistoryLength *int           `json:"historyLength,omitzero"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

type taskIDParamsJSON struct {
	ID       *string        `json:"id"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type taskPushConfigParamsJSON struct {
	ID                       *string        `json:"id"`
	PushNotificationConfigID *string        `json:"pushNotificationConfigId,omitzero"`
	Metadata                 map[string]any `json:"metadata,omitempty"`
}

var _ jsontext.Value
