//go:build race

package sse

// raceEnabled: the race detector makes sync.Pool drop items at random.
const raceEnabled = true
