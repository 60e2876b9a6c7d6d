// Package simple bridges A2A and "the simple dialect": one JSON POST per
// message, answered with one JSON object. It holds
//
//   - the dialect's types ([Request], [Response]) and their strict parsers
//     ([ParseRequest], [ParseResponse]);
//   - the mapping between A2A parts and dialect values, both ways
//     ([PartsToValue], [ArtifactsToValue], [ValueToParts]);
//   - [Agent], a server.Agent that forwards each message to an HTTP service
//     speaking the dialect (the `http` kind of `a2abridge serve`), with an
//     Idempotency-Key derived from the A2A task id and messageId
//     ([IdempotencyKey]);
//   - [NewEndpoint], an http.Handler that lets simple callers use any hosted
//     A2A agent (POST /simple/{agent}); an agent that authenticates its
//     callers takes only JSON bodies there (application/json or
//     application/*+json, else HTTP 415), against cross-site request
//     forgery.
//
// # The dialect
//
// A request is POSTed as application/json:
//
//	{"task_id": "<id>", "input": <any JSON value>}
//
// and answered with a JSON object:
//
//	{"task_id": "<id>", "status": "success" | "error" | "input_required",
//	 "output": <object, string or null>, "error": null | "<message>"}
//
// "input_required" is this package's extension of the dialect: the backend
// asks a question (in "error", or as the text of "output"), the caller
// answers by POSTing again with the same task_id, and the backend answers
// that call as usual.
//
// The http agent ([Agent]) sends each request with the header
// "Idempotency-Key: hex(sha256(<A2A task id> + "\x00" + <A2A
// messageId>))[:32]" (32 lowercase hex digits), the same on every attempt
// at one message and different for every message of every task: a
// backend that keeps the answers it gave by key can answer a retry
// without doing the work again.
//
// # Parts to a value (A2A → dialect)
//
// [PartsToValue] turns a message's parts into the request's "input":
//
//   - a single DataPart: its data, as is (any JSON value);
//   - otherwise a JSON object ({} for no parts): the keys of the
//     DataParts whose data is an object, merged in part order (a later
//     part's key replaces an earlier one's); then the text field (default
//     "text", see Config.TextField) holds the TextParts' texts joined with
//     "\n", "files" the FileParts as {"name", "mediaType", "uri"} or
//     {"name", "mediaType", "bytes": "<standard base64>"} (name and
//     mediaType left out when empty), and "data" the list of the data of
//     the other DataParts: each of these three keys only when there are
//     such parts, and then replacing a data key of the same name.
//
// So a text message "hi" becomes {"text": "hi"}, a DataPart {"a": 1}
// becomes {"a": 1}, and a text with a file becomes
// {"text": "see attached", "files": [{"name": "a.txt", "mediaType":
// "text/plain", "bytes": "aGk="}]}.
//
// [ArtifactsToValue] does the same for a task's artifacts (the endpoint's
// "output"), with one difference: the texts of one artifact are
// concatenated without separator (they are usually chunks of one text,
// A2A 0.3.0 §7.2.4), and the texts of different artifacts are joined with
// "\n"; and a single DataPart in all the artifacts is its data as is only
// when that is an object (other data goes into the "data" list), so that
// the output is always an object.
//
// # A value to parts (dialect → A2A)
//
// [ValueToParts] turns a backend's "output" into the parts of an artifact,
// and a simple caller's "input" into the parts of a message:
//
//   - null: no parts;
//   - a string: one TextPart;
//   - an object whose only keys are the text field (a string) and/or
//     "files" (a non-empty list of files in the shape above, each with
//     exactly one of "uri" and "bytes"): a TextPart, then one FilePart per
//     file;
//   - any other object: a TextPart of the text field when that holds a
//     string, then a DataPart of the whole object, the text field
//     included; so {"text": "hi", "n": 1} is the TextPart "hi" and the
//     DataPart {"text": "hi", "n": 1}, while {"n": 1} and {"text": 5} are a
//     DataPart only;
//   - any other value (array, number, boolean): one DataPart.
//
// The two directions agree: for an object v without a "files" key,
// ArtifactsToValue of an artifact with the parts ValueToParts(v) is v
// again.
package simple
