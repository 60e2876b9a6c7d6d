package v10

import (
	stdjson "encoding/json"
	"time"

	"github.com/a2abridge/a2abridge/a2a"
)

// Sample domain values for the tests: every member of every type set at
// least once.

var sampleTime = time.Date(2025, 6, 1, 12, 0, 0, 123e6, time.UTC)

func sampleMessage() a2a.Message {
	return a2a.Message{MessageID: "m1", Role: a2a.RoleUser, ContextID: "c1", TaskID: "t1",
		Parts: []a2a.Part{
			a2a.Part{Content: a2a.Text("hi"), Metadata: map[string]any{"k": "v"}},
			a2a.Part{Content: a2a.Text("# title"), MediaType: "text/markdown", Filename: "notes.md"},
			// Numbers decode as json.Number, their literal text kept.
			a2a.NewDataPart(map[string]any{"n": stdjson.Number("1.5"), "a": []any{true, nil, "x"},
				"big": stdjson.Number("123456789012345678901234567890"), "exact": stdjson.Number("9007199254740993")}),
			a2a.Part{Content: a2a.Data{Value: []any{stdjson.Number("1"), "two"}}, MediaType: "application/json", Filename: "list.json"},
			a2a.NewDataPart(nil),
			a2a.NewDataPart("just a string"),
			a2a.Part{Content: a2a.Raw([]byte{0, 1, 2, 255}), MediaType: "application/octet-stream", Filename: "f.bin"},
			a2a.Part{Content: a2a.URL("https://example.com/x.png"), MediaType: "image/png", Metadata: map[string]any{"w": stdjson.Number("640")}},
			a2a.NewRawPart([]byte{}),
		}, ReferenceTaskIDs: []string{"t0"}, Extensions: []string{"urn:x"}, Metadata: map[string]any{"m": "d"}}
}

func sampleTask() *a2a.Task {
	msg := sampleMessage()
	return &a2a.Task{ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: sampleTime,
			Message: &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.NewTextPart("more?")}}},
		History:   []a2a.Message{msg},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "out", Description: "d", Parts: []a2a.Part{a2a.NewTextPart("x")}, Extensions: []string{"urn:e"}, Metadata: map[string]any{"z": "y"}}},
		Metadata:  map[string]any{"task": "meta"},
	}
}

func sampleStatusUpdate() *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Final: false,
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: sampleTime, Message: &a2a.Message{MessageID: "m3", Role: a2a.RoleAgent, TaskID: "t1", ContextID: "c1", Parts: []a2a.Part{a2a.NewTextPart("thinking")}}},
		Metadata: map[string]any{"seq": stdjson.Number("7")}}
}

func sampleArtifactUpdate() *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Append: true, LastChunk: true,
		Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.NewTextPart("chunk")}},
		Metadata: map[string]any{"k": "v"}}
}

func samplePushConfig() a2a.TaskPushNotificationConfig {
	return a2a.TaskPushNotificationConfig{Tenant: "acme", TaskID: "t1", PushNotificationConfig: a2a.PushNotificationConfig{
		ID: "p1", URL: "https://hooks.example.com/a2a", Token: "tok",
		Authentication: &a2a.AuthenticationInfo{Schemes: []string{"Bearer"}, Credentials: "secret"}}}
}

func sampleCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "Recipe Agent", Description: "Finds recipes", Version: "1.2.0",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://agent.example.com/a2a/v1", Transport: a2a.TransportJSONRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example.com/a2a/rest", Transport: a2a.TransportHTTPJSON, ProtocolVersion: "1.0", Tenant: "acme"},
			{URL: "https://agent.example.com/a2a", Transport: a2a.TransportJSONRPC, ProtocolVersion: "0.3"},
		},
		Provider:         &a2a.AgentProvider{Organization: "Example Org", URL: "https://example.com"},
		DocumentationURL: "https://example.com/docs", IconURL: "https://example.com/icon.png",
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{{URI: a2a.ExtensionEventLog, Description: "event log", Required: false},
				{URI: "urn:x:geo", Required: true, Params: map[string]any{"precision": stdjson.Number("3")}}}},
		SupportsAuthenticatedExtendedCard: true,
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT", Description: "a token"},
			"key":    a2a.APIKeySecurityScheme{In: "header", Name: "X-API-Key"},
			"oauth": a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.OAuthFlow{TokenURL: "https://auth.example.com/token",
				Scopes: map[string]string{"read": "read things", "write": "write things"}}}, OAuth2MetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"},
			"code": a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.OAuthFlow{AuthorizationURL: "https://auth.example.com/authorize",
				TokenURL: "https://auth.example.com/token", RefreshURL: "https://auth.example.com/refresh", Scopes: map[string]string{}}}},
			"oidc": a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://auth.example.com/.well-known/openid-configuration"},
			"mtls": a2a.MutualTLSSecurityScheme{Description: "client certificates"},
		},
		Security:           []map[string][]string{{"bearer": {}}, {"oauth": {"read", "write"}, "key": {}}},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{ID: "find", Name: "Find recipes", Description: "Finds recipes by ingredient", Tags: []string{"cooking"},
				Examples: []string{"pasta with tomatoes"}, InputModes: []string{"text/plain"}, OutputModes: []string{"application/json"},
				Security: []map[string][]string{{"oauth": {"read"}}}},
			{ID: "plain", Name: "Plain", Description: "No extras", Tags: []string{}},
		},
		Signatures: []a2a.AgentCardSignature{{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2ln", Header: map[string]any{"kid": "k1"}}},
	}
}
