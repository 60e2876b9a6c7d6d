package testutil

import (
	"testing"
	"time"
)

// The pause between two looks of Poll starts at firstPause and doubles up
// to maxPause: a quick condition is seen at once, a slow one costs little.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

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
	pause := firstPause
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPause)
	}
}

// Receive returns the next value from ch (the zero value if ch is
// closed), or fails t if none comes within timeout; what names the
// awaited value in the message.
func Receive[T any](t testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("%s: not within %s", what, timeout)
	}
	var zero T
	return zero
}

// Drain receives from ch until it is closed and returns what came, or
// fails t if ch is still open after timeout (a stream that hangs).
func Drain[T any](t testing.TB, ch <-chan T, timeout time.Duration) []T {
	t.Helper()
	var out []T
	deadline := time.After(timeout)
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, v)
		case <-deadline:
			t.Fatalf("stream still open after %s (%d events so far)", timeout, len(out))
		}
	}
}
