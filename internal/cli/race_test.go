//go:build race

package cli

// raceEnabled: the test binary and the serve binary it builds run under
// the race detector, which multiplies memory and slows requests several
// times over.
const raceEnabled = true
