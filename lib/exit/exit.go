// Package exit holds the one exit-code table shared by every treeloop command
// (DESIGN.md "Suggested exit codes") and an error type that carries its code up
// to main, which alone calls os.Exit.
package exit

import (
	"errors"
	"fmt"
)

// The exit codes. Agent and guard exit codes are recorded in logs, never
// returned as one of these.
const (
	OK          = 0   // success: valid, open leaf selected, guard passed, committed
	Negative    = 1   // negative answer: invalid tree, guard failed, policy refused
	Complete    = 2   // complete: no open leaf
	Stuck       = 3   // stuck: the selected leaf has no attempts left
	Limit       = 4   // limit: max_iterations (or a run budget) reached
	AgentError  = 5   // agent error: attempt consumed
	RunnerError = 6   // runner error: no attempt consumed
	Waiting     = 7   // waiting: every open leaf waits for an operator's answer (tree-edit answer)
	Paused      = 8   // paused: a usage limit or an outage ended the session (no attempt consumed); the run waits for its reset or a backoff
	Usage       = 80  // usage error (kong's default)
	Timeout     = 124 // the iteration timed out; the run stops
	SIGINT      = 130 // interrupted by SIGINT
	SIGTERM     = 143 // interrupted by SIGTERM
)

// Error is an error that carries the exit code its command should end with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode reports the code the command should exit with.
func (e *Error) ExitCode() int { return e.Code }

// Errorf builds an *Error with the given code; %w wraps as in fmt.Errorf.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Wrap gives err the exit code code (nil stays nil).
func Wrap(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Code reports the exit code for err: 0 for nil, the code of the outermost
// error in the chain with an ExitCode method, else RunnerError.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return RunnerError
}
