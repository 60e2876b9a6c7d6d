package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// interrupts routes the signals a2abridge receives to whatever is waiting
// at the moment, innermost first: the whole command (the base handler
// Run installs cancels its context), a chat prompt, a chat turn. A handler
// fires once; a second SIGINT that reaches a handler which already fired
// (the first Ctrl-C is still being handled) exits the process at once.
// SIGTERM always goes to the base handler: it stops the command as a
// whole (serve shuts down gracefully).
type interrupts struct {
	mu       sync.Mutex
	handlers []*intrHandler // a stack; handlers[0] is the base handler
	exit     func(code int)
}

type intrHandler struct {
	fire  func(os.Signal)
	fired bool
}

// push makes fire the receiver of the next SIGINT until pop is called.
func (in *interrupts) push(fire func(os.Signal)) (pop func()) {
	h := &intrHandler{fire: fire}
	in.mu.Lock()
	in.handlers = append(in.handlers, h)
	in.mu.Unlock()
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		for i := len(in.handlers) - 1; i >= 0; i-- {
			if in.handlers[i] == h {
				in.handlers = append(in.handlers[:i], in.handlers[i+1:]...)
				return
			}
		}
	}
}

// deliver hands one signal to its handler.
func (in *interrupts) deliver(sig os.Signal) {
	in.mu.Lock()
	if len(in.handlers) == 0 {
		in.mu.Unlock()
		return
	}
	h := in.handlers[len(in.handlers)-1]
	if sig != os.Interrupt {
		h = in.handlers[0]
	}
	if h.fired {
		in.mu.Unlock()
		if sig == os.Interrupt && in.exit != nil {
			in.exit(exitCodeFor(sig))
		}
		return
	}
	h.fired = true
	in.mu.Unlock()
	h.fire(sig)
}

// loop delivers signals from sigs until done is closed.
func (in *interrupts) loop(sigs <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			in.deliver(s)
		case <-done:
			return
		}
	}
}

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string {
	switch e.sig {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGTERM:
		return "stopped by SIGTERM"
	}
	return fmt.Sprintf("stopped by signal %v", e.sig)
}

// exitCodeFor is the shell's convention: 128 + the signal number.
func exitCodeFor(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// stoppedBy reports the signal that cancelled ctx, if one did.
func stoppedBy(ctx context.Context) (os.Signal, bool) {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig, true
	}
	return nil, false
}

// stoppedError ends a command that a signal stopped. Hint lines (how to
// continue with the task) are printed after the message; quiet prints
// nothing (Ctrl-C at an idle chat prompt).
type stoppedError struct {
	sig   os.Signal
	hint  []string
	quiet bool
}

func (e *stoppedError) Error() string { return signalError{e.sig}.Error() }
