package server

// HoldOf reports StreamEvent's hold hint (for the tests of package
// server_test).
func HoldOf(ev StreamEvent) bool { return ev.hold }
