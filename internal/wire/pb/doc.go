// Package pb is the binary protobuf encoding of the A2A 1.0 messages
// (a2a.proto, package lf.a2a.v1) for the gRPC binding (A2A 1.0 §10):
// append-style encoders and strict decoders of the a2a domain model,
// written by hand like the JSON codecs, with the field numbers of the
// proto (internal/a2aproto holds them, and the tests check them against
// the proto compiled by protobuf-go).
//
// It does not use protobuf-go's generated types: nothing here registers
// the lf.a2a.v1 names in protobuf's global registry, so a program may
// also link an official SDK's generated code for the same proto (which
// registers them, and would panic at start on a second registration).
//
// # Mapping to the domain model
//
//   - As in the 1.0 JSON codec: a2a.TaskState is the TaskState number,
//     a2a.Role the Role number, a Part's content the content oneof (Text,
//     Raw, URL, Data), TaskPushNotificationConfig flattened with one
//     authentication scheme (Schemes[0]), Blocking the negation of
//     return_immediately.
//   - Metadata and Data values are google.protobuf.Struct and Value:
//     numbers are doubles (a json.Number is read as one; a value that
//     does not fit a double loses precision, as in any gRPC peer), and
//     decoded numbers are float64.
//   - Timestamps are google.protobuf.Timestamp, decoded in UTC, to the
//     nanosecond (the JSON codec writes milliseconds).
//   - TaskStatusUpdateEvent.Final has no field: it is not written, and is
//     read as true on a state that ends a stream (terminal or interrupted).
//
// Decoding is as strict as the 1.0 JSON codec's: the fields that codec
// requires (a message's id and role, a task's id and status, a push
// config's url, …) are required, a Part has exactly one content and a
// response exactly one payload; unknown fields are skipped. A message
// field given twice merges, as the encoding has it. Errors are
// *a2a.Error InvalidParams (-32602) whose data names the field as a JSON
// Pointer of the message's JSON form ("/message/parts/0",
// "/message/metadata/key/1"), as the JSON codecs do.
package pb
