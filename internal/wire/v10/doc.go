// Package v10 is the A2A 1.0 JSON wire encoding of the a2a domain model
// (A2A 1.0 §4, §5.5–5.7, §9, §11; ProtoJSON of a2a.proto, ADR-001):
// lowerCamelCase member names, enums by name (TASK_STATE_WORKING,
// ROLE_USER), no "kind" discriminators, the Part union as one of text, raw
// (base64), url or data, oneof wrappers such as {"task": …} and
// {"httpAuthSecurityScheme": …}, RFC 3339 UTC timestamps, and errors that
// carry google.rpc.ErrorInfo details.
//
// Encoding is append-style and hand-written (AppendStreamResponse,
// AppendTask, …), like v03's: a SendMessage result or a stream frame is
// written straight into the caller's buffer. Members come in a2a.proto
// order; zero values are omitted as ProtoJSON omits them, but members that
// a2a.proto marks REQUIRED are always written (A2A 1.0 §5.7), and so is
// ListTasksResponse.nextPageToken (A2A 1.0 §3.1.4).
//
// # Mapping to the domain model
//
//   - a2a.TaskState ⇄ TASK_STATE_*; a2a.TaskStateUnspecified ⇄
//     TASK_STATE_UNSPECIFIED (also an absent state).
//   - a2a.Part: a2a.Text ⇄ {"text"}, a2a.Raw ⇄ {"raw"}, a2a.URL ⇄
//     {"url"}, a2a.Data ⇄ {"data"} (any JSON value; null is the JSON
//     null), with its MediaType ⇄ mediaType and Filename ⇄ filename.
//   - MessageSendConfiguration.Blocking ⇄ !returnImmediately: true gives
//     Blocking false; false or absent leaves it nil (blocking).
//   - TaskPushNotificationConfig is flattened (tenant, id, taskId, url,
//     token, authentication); AuthenticationInfo has one scheme, Schemes[0].
//   - TaskStatusUpdateEvent.Final has no 1.0 member: it is not written,
//     and is read as true on a terminal or interrupted state.
//   - Numbers inside metadata and data stay exact (encoding/json.Number).
//
// # Decoding: liberal where ProtoJSON is, strict on types
//
// Requests and responses are read token by token, with errors that are
// *a2a.Error InvalidParams (-32602) naming the offending value by its JSON
// Pointer ("/params/message/parts/0/raw"; an HTTP+JSON body that is not
// JSON is ErrParse). As ProtoJSON parsers do, the decoders accept:
//
//   - the proto field name as well as the JSON name (context_id for
//     contextId), case-sensitively; both in one object is an error. The
//     A2A 1.0 JSON Schema allows both, and a2a-js 1.x reads both;
//   - null for any member, meaning absent (but a Part's "data": null is
//     the JSON null);
//   - int32 members as numbers or decimal strings ("historyLength": "5");
//     enums by name or by number ("state": 2); base64 standard or URL-safe,
//     padded or not; timestamps with any RFC 3339 offset (turned to UTC);
//   - unknown members, which are ignored (A2A 1.0 §5.7 says SHOULD
//     ignore; SDKs add members: a2a-go's "final" on a status update is
//     even honoured, and a 0.3 "kind" next to a 1.0 part is harmless).
//
// They reject wrong JSON types, unknown enum names, invalid base64 or
// timestamps, a part with none or two of text/raw/url/data, a missing
// required member (an empty string or a zero enum counts as missing, as
// ProtoJSON cannot tell them apart), out-of-range numbers (pageSize 1 to
// 100, historyLength >= 0), and invalid JSON (duplicate names, invalid
// UTF-8). A client's message must have at least one part (A2A 1.0 §5.7);
// in a response an absent parts array reads as empty (ProtoJSON writers
// omit it).
package v10
