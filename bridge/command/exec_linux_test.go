//go:build linux

package command

import (
	"fmt"
	"testing"
)

func TestStatPgrp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"42 (sleep) S 1 42 42 0 -1 4194304", 42, true},
		{"7 (a b) c) S 1 99 7 0", 99, true},
		{"7 ((x)) R 0 0", 0, true},
		{"7 (x) S 1", 0, false},
		{"7 x S 1 2 3", 0, false},
		{"7 (x) S 1 -3 3", 0, false},
		{"7 (x) S 1 z 3", 0, false},
		{"", 0, false},
	} {
		g, ok := statPgrp([]byte(c.in))
		if g != c.want || ok != c.ok {
			t.Errorf("statPgrp(%q) = %d, %v; want %d, %v", c.in, g, ok, c.want, c.ok)
		}
	}
}

func FuzzStatPgrp(f *testing.F) {
	f.Add([]byte("42 (sleep) S 1 42 42 0 -1"), "sleep", uint32(42))
	f.Add([]byte("7 (a b) c) S 1 99 7 0"), "a) (b", uint32(0))
	f.Add([]byte(")"), "", uint32(1<<31))
	f.Fuzz(func(t *testing.T, b []byte, comm string, pgrp uint32) {
		if g, ok := statPgrp(b); ok && g < 0 {
			t.Fatalf("statPgrp(%q) = %d", b, g)
		}
		// Whatever the command's name, the group of a well-formed line
		// is found.
		line := fmt.Sprintf("123 (%s) S 1 %d 123 0 -1 4194304", comm, pgrp)
		if g, ok := statPgrp([]byte(line)); !ok || g != int(pgrp) {
			t.Fatalf("statPgrp(%q) = %d, %v; want %d", line, g, ok, pgrp)
		}
		if p, ok := statProc([]byte(line)); !ok || p != (proc{ppid: 1, pgrp: int(pgrp), state: 'S'}) {
			t.Fatalf("statProc(%q) = %+v, %v", line, p, ok)
		}
	})
}
