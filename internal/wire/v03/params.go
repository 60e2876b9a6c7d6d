package v03

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/a2abridge/a2abridge/a2a"
)

func unmarshalParams(raw []byte, v any) *a2a.Error {
	if len(raw) == 0 || string(raw) == "null" {
		return a2a.InvalidParams("/params", "params are required")
	}
	if raw[0] != '{' {
		// Positional (array) params or a scalar: A2A methods take an object.
		for _, c := range raw {
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				continue
			}
			if c != '{' {
				return a2a.InvalidParams("/params", "params must be a JSON object")
			}
			break
		}
	}
	if err := json.Unmarshal(raw, v, decodeOpts); err != nil {
		return decodeErr("/params", err)
	}
	return nil
}

// DecodeMessageSendParams decodes the params of message/send or
// message/stream (A2A 0.3.0 §7.1). Errors: *a2a.Error -32602 naming the field.
func DecodeMessageSendParams(raw []byte) (a2a.SendMessageRequest, error) {
	var p messageSendParamsJSON
	if err := unmarshalParams(raw, &p); err != nil {
		return a2a.SendMessageRequest{}, err
	}
	if p.Message == nil {
		return a2a.SendMessageRequest{}, a2a.InvalidParams("/params/message", "required field missing")
	}
	msg, err := toMessage("/params/message", p.Message)
	if err != nil {
		return a2a.SendMessageRequest{}, err
	}
	out := a2a.SendMessageRequest{Message: msg, Metadata: p.Metadata}
	if c := p.Configuration; c != nil {
		cfg := &a2a.SendMessageConfiguration{AcceptedOutputModes: c.AcceptedOutputModes, Blocking: c.Blocking, HistoryLength: c.HistoryLength}
		if c.HistoryLength != nil && *c.HistoryLength < 0 {
			return a2a.SendMessageRequest{}, a2a.InvalidParams("/params/configuration/historyLength", "historyLength must not be negative")
		}
		if c.PushNotificationConfig != nil {
			pc, err := toPushConfig("/params/configuration/pushNotificationConfig", c.PushNotificationConfig)
			if err != nil {
				return a2a.SendMessageRequest{}, err
			}
			cfg.PushNotificationConfig = &pc
		}
		out.Configuration = cfg
	}
	return out, nil
}

// EncodeMessageSendParams encodes params for message/send or message/stream.
func EncodeMessageSendParams(p *a2a.SendMessageRequest) ([]byte, error) {
	w := messageSendParamsJSON{Metadata: p.Metadata}
	m := fromMessage(&p.Message)
	w.Message = &m
	if c := p.Configuration; c != nil {
		w.Configuration = &messageSendConfigurationJSON{AcceptedOutputModes: c.AcceptedOutputModes, Blocking: c.Blocking, HistoryLength: c.HistoryLength}
		if c.PushNotificationConfig != nil {
			w.Configuration.PushNotificationConfig = fromPushConfig(c.PushNotificationConfig)
		}
	}
	return json.Marshal(&w, encodeOpts)
}

func toPushConfig(path string, c *pushNotificationConfigJSON) (a2a.PushNotificationConfig, *a2a.Error) {
	if c.URL == "" {
		return a2a.PushNotificationConfig{}, a2a.InvalidParams(path+"/url", "required field missing")
	}
	out := a2a.PushNotificationConfig{ID: c.ID, URL: c.URL, Token: c.Token}
	if c.Authentication != nil {
		if c.Authentication.Schemes == nil {
			return out, a2a.InvalidParams(path+"/authentication/schemes", "required field missing")
		}
		out.Authentication = &a2a.AuthenticationInfo{Schemes: c.Authentication.Schemes, Credentials: c.Authentication.Credentials}
	}
	return out, nil
}

func fromPushConfig(c *a2a.PushNotificationConfig) *pushNotificationConfigJSON {
	out := &pushNotificationConfigJSON{ID: c.ID, URL: c.URL, Token: c.Token}
	if c.Authentication != nil {
		s := c.Authentication.Schemes
		if s == nil {
			s = []string{}
		}
		out.Authentication = &pushNotificationAuthenticationInfoJSON{Schemes: s, Credentials: c.Authentication.Credentials}
	}
	return out
}

// DecodeTaskQueryParams decodes tasks/get params (A2A 0.3.0 §7.3).
func DecodeTaskQueryParams(raw []byte) (a2a.GetTaskRequest, error) {
	var p taskQueryParamsJSON
	if err := unmarshalParams(raw, &p); err != nil {
		return a2a.GetTaskRequest{}, err
	}
	if p.ID == nil {
		return a2a.GetTaskRequest{}, a2a.InvalidParams("/params/id", "required field missing")
	}
	if p.HistoryLength != nil && *p.HistoryLength < 0 {
		return a2a.GetTaskRequest{}, a2a.InvalidParams("/params/historyLength", "historyLength must not be negative")
	}
	return a2a.GetTaskRequest{ID: *p.ID, HistoryLength: p.HistoryLength, Metadata: p.Metadata}, nil
}

// EncodeTaskQueryParams encodes tasks/get params.
func EncodeTaskQueryParams(p *a2a.GetTaskRequest) ([]byte, error) {
	id := p.ID
	return json.Marshal(&taskQueryParamsJSON{ID: &id, HistoryLength: p.HistoryLength, Metadata: p.Metadata}, encodeOpts)
}

// DecodeTaskIDParams decodes tasks/cancel, tasks/resubscribe and
// tasks/pushNotificationConfig/list params (A2A 0.3.0 §7.4, §7.9, §7.7).
func DecodeTaskIDParams(raw []byte) (a2a.CancelTaskRequest, error) {
	var p taskIDParamsJSON
	if err := unmarshalParams(raw, &p); err != nil {
		return a2a.CancelTaskRequest{}, err
	}
	if p.ID == nil {
		return a2a.CancelTaskRequest{}, a2a.InvalidParams("/params/id", "required field missing")
	}
	return a2a.CancelTaskRequest{ID: *p.ID, Metadata: p.Metadata}, nil
}

// EncodeTaskIDParams encodes TaskIdParams.
func EncodeTaskIDParams(p *a2a.CancelTaskRequest) ([]byte, error) {
	id := p.ID
	return json.Marshal(&taskIDParamsJSON{ID: &id, Metadata: p.Metadata}, encodeOpts)
}

// DecodeTaskPushNotificationConfig decodes tasks/pushNotificationConfig/set
// params (A2A 0.3.0 §7.5).
func DecodeTaskPushNotificationConfig(raw []byte) (a2a.TaskPushNotificationConfig, error) {
	var p taskPushNotificationConfigJSON
	if err := unmarshalParams(raw, &p); err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	if p.TaskID == "" {
		return a2a.TaskPushNotificationConfig{}, a2a.InvalidParams("/params/taskId", "required field missing")
	}
	if p.PushNotificationConfig == nil {
		return a2a.TaskPushNotificationConfig{}, a2a.InvalidParams("/params/pushNotificationConfig", "required field missing")
	}
	pc, err := toPushConfig("/params/pushNotificationConfig", p.PushNotificationConfig)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	return a2a.TaskPushNotificationConfig{TaskID: p.TaskID, PushNotificationConfig: pc}, nil
}

// MarshalTaskPushNotificationConfig encodes a TaskPushNotificationConfig.
func MarshalTaskPushNotificationConfig(c *a2a.TaskPushNotificationConfig) ([]byte, error) {
	return json.Marshal(&taskPushNotificationConfigJSON{TaskID: c.TaskID, PushNotificationConfig: fromPushConfig(&c.PushNotificationConfig)}, encodeOpts)
}

// DecodeTaskPushConfigParams decodes tasks/pushNotificationConfig/get and
// /delete params (A2A 0.3.0 §7.6, §7.8). For delete the config id is required.
func DecodeTaskPushConfigParams(raw []byte, requireConfigID bool) (a2a.GetTaskPushNotificationConfigRequest, error) {
	var p taskPushConfigParamsJSON
	if err := unmarshalParams(raw, &p); err != nil {
		return a2a.GetTaskPushNotificationConfigRequest{}, err
	}
	if p.ID == nil {
		return a2a.GetTaskPushNotificationConfigRequest{}, a2a.InvalidParams("/params/id", "required field missing")
	}
	out := a2a.GetTaskPushNotificationConfigRequest{TaskID: *p.ID, Metadata: p.Metadata}
	if p.PushNotificationConfigID != nil {
		out.ID = *p.PushNotificationConfigID
	} else if requireConfigID {
		return out, a2a.InvalidParams("/params/pushNotificationConfigId", "required field missing")
	}
	return out, nil
}

// MarshalError encodes an error object {"code":…,"message":…,"data":…}.
func MarshalError(e *a2a.Error) ([]byte, error) {
	type errJSON struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	return json.Marshal(&errJSON{Code: e.Code, Message: e.Message, Data: e.Data}, encodeOpts)
}

// UnmarshalTaskPushNotificationConfig decodes a TaskPushNotificationConfig
// (the result of tasks/pushNotificationConfig/set and /get).
func UnmarshalTaskPushNotificationConfig(raw []byte) (a2a.TaskPushNotificationConfig, error) {
	var p taskPushNotificationConfigJSON
	if err := json.Unmarshal(raw, &p, decodeOpts); err != nil {
		return a2a.TaskPushNotificationConfig{}, decodeErr("", err)
	}
	if p.PushNotificationConfig == nil {
		return a2a.TaskPushNotificationConfig{}, a2a.InvalidParams("/pushNotificationConfig", "required field missing")
	}
	pc, err := toPushConfig("/pushNotificationConfig", p.PushNotificationConfig)
	if err != nil {
		return a2a.TaskPushNotificationConfig{}, err
	}
	return a2a.TaskPushNotificationConfig{TaskID: p.TaskID, PushNotificationConfig: pc}, nil
}

// UnmarshalTaskPushNotificationConfigs decodes the array result of
// tasks/pushNotificationConfig/list.
func UnmarshalTaskPushNotificationConfigs(raw []byte) ([]a2a.TaskPushNotificationConfig, error) {
	var items []jsontext.Value
	if err := json.Unmarshal(raw, &items, decodeOpts); err != nil {
		return nil, decodeErr("", err)
	}
	out := make([]a2a.TaskPushNotificationConfig, 0, len(items))
	for _, it := range items {
		c, err := UnmarshalTaskPushNotificationConfig(it)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// EncodeTaskPushConfigParams encodes the params of
// tasks/pushNotificationConfig/get and /delete.
func EncodeTaskPushConfigParams(p *a2a.GetTaskPushNotificationConfigRequest) ([]byte, error) {
	id := p.TaskID
	w := taskPushConfigParamsJSON{ID: &id, Metadata: p.Metadata}
	if p.ID != "" {
		c := p.ID
		w.PushNotificationConfigID = &c
	}
	return json.Marshal(&w, encodeOpts)
}
