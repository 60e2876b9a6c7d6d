package edge

// CardURLKey carries the agent's reachable URL in a request's context
// (a string), for the extended card; servedKey the protocol versions the
// transport serves ([]string), which its interfaces list.
type CardURLKey struct{}

type ServedKey struct{}

// PushConfigIDField is the field an unknown push notification config id
// is reported on (-32602 in A2A 0.3; the 1.0 bindings turn it into
// TaskNotFoundError).
const PushConfigIDField = "/params/pushNotificationConfigId"
