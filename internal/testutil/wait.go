package testutil

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually looks again.
const pollEvery = 5 * time.Millisecond

// Eventually calls cond until it reports true and fails t if it has not
// within timeout; what describes the awaited condition in the message.
// It is for states the test cannot be told about; where the code under
// test signals (a channel, a callback), wait for that instead.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("%s: not within %s", what, timeout)
	}
}

// Poll calls cond until it reports true or timeout passes, and reports
// whether it did.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// Receive returns the next value from ch, or fails t if none comes within
// timeout or ch is closed; what names the awaited value in the message.
func Receive[T any](t testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
		return v
	case <-time.After(timeout):
		t.Fatalf("%s: nothing within %s", what, timeout)
	}
	var zero T
	return zero
}
