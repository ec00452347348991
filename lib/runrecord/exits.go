package runrecord

import "github.com/treeloop/treeloop/lib/exit"

// The porcelain that ends a runner session (seed 004 "run records",
// DESIGN.md decision 15), as runner-record end --by names it.
const (
	ByLoop = "runner-loop"
	ByStep = "runner-step"
)

// EndOfExit is what a porcelain's exit code does to its run record:
// the status the record ends with, or "" when the run goes on (the record
// stays running without a runner: runner-step run alone after a committed
// iteration, a refusal or a runner error), and then whether the step
// failed (a refusal or a runner error, logged in the record).
//
// runner-loop (by ByLoop) ends the run on every exit: 0 complete, 3
// stuck, 4 limit, 7 waiting, 8 paused, 124 timeout, 130/143 interrupted,
// anything else error. runner-step (ByStep) ends it on 2 complete, 3
// stuck, 4 limit, 7 waiting, 124 timeout, 130/143 interrupted; 0, 5 and 8
// committed an iteration and leave it running; anything else failed.
func EndOfExit(by string, code int) (status string, failed bool) {
	switch code {
	case exit.Stuck:
		return Stuck, false
	case exit.Limit:
		return Limit, false
	case exit.Waiting:
		return Waiting, false
	case exit.Timeout:
		return Timeout, false
	case exit.SIGINT, exit.SIGTERM:
		return Interrupted, false
	}
	if by == ByLoop {
		switch code {
		case exit.OK:
			return Complete, false
		case exit.Paused:
			return Paused, false
		}
		return Error, false
	}
	switch code {
	case exit.Complete:
		return Complete, false
	case exit.OK, exit.AgentError, exit.Paused:
		return "", false
	}
	return "", true
}
