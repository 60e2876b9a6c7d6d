// Package push implements the cryptography and the networking of A2A push
// notifications (A2A 0.3.0 §9.5 "Push Notification Setup and Usage", §10.2
// "Security Considerations Summary", and the "Security Considerations for
// Push Notifications" section of the streaming-and-async topic guide).
//
// Three independent pieces live here:
//
//   - [Signer] (the A2A server, the sender): it holds ES256 (default) or RS256
//     signing keys, optionally persisted in a directory, signs one JWT per
//     notification POST ([Signer.Sign]) and publishes the public keys as a JWK
//     Set ([Signer.JWKS], [Signer.Handler]). Keys rotate with [Signer.Rotate];
//     a retired key stays published for a grace period.
//   - [Verifier] (the webhook, the receiver): it checks the
//     "Authorization: Bearer <jwt>" header of a notification against the
//     sender's JWK Set, fetched over HTTP and cached, and checks expiry,
//     freshness, audience, issuer, replay (jti) and the body hash.
//   - [NewGuardedClient], [CheckURL] and [CheckURLContext] (the sender): an
//     *http.Client that refuses, at dial time, to connect to loopback,
//     private, link-local, CGNAT, multicast or unspecified addresses unless
//     they are allowlisted, and the same check on a webhook URL when it is
//     configured (CheckURLContext also resolves its host name), which is the
//     SSRF protection the specification asks a server to apply to
//     client-supplied webhook URLs.
//
// The token is a compact JWS with the protected header
//
//	{"alg":"ES256","typ":"JWT","kid":"<RFC 7638 thumbprint>"}
//
// and the claims
//
//	{"iss":"https://agent.example.com","aud":"https://client.example.com/webhook",
//	 "iat":1700000000,"exp":1700000300,"jti":"<32 hex digits>",
//	 "taskId":"<task id>","request_body_sha256":"<64 lowercase hex digits>"}
//
// where aud is the webhook URL exactly as configured in the task's
// PushNotificationConfig.url, and request_body_sha256 binds the token to the
// exact bytes of the POST body. The client's opaque PushNotificationConfig.token
// travels separately in the X-A2A-Notification-Token header
// ([HeaderNotificationToken], [Token], [TokenEqual]).
//
// No type of a third-party library appears in this package's API.
package push
