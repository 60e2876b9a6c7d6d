package postgres

// ListenPing lets tests shorten how long Watch waits before it pings its
// connection.
var ListenPing = &listenPing
