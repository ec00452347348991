package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/proc"
)

// Interrupt is a context canceled by the first SIGINT or SIGTERM, and which
// of them arrived (seed 004, DESIGN.md decision 12). Commands that run an
// agent or a guard use it to stop the process group and record the
// iteration as interrupted instead of dying mid-write.
type Interrupt struct {
	context.Context
	code   atomic.Int32
	cause  atomic.Value // string: "SIGINT", "SIGTERM" or "cancel-file"
	at     atomic.Int64 // when the first interruption came, Unix nanoseconds
	cancel context.CancelFunc
	stop   func()
}

// NotifyInterrupt starts listening for SIGINT and SIGTERM. Call Stop when
// done. In a command that defers signals (lib/proc.DeferSignals: one run by
// runner-step or runner-loop), it takes the signals held since the
// command started, so one that arrived before is not lost: the Interrupt
// is then done at once, and no session starts.
func NotifyInterrupt() *Interrupt {
	ctx, cancel := context.WithCancel(context.Background())
	in := &Interrupt{Context: ctx, cancel: cancel}
	ch := proc.Held()
	var own chan os.Signal
	if ch == nil {
		own = make(chan os.Signal, 2)
		signal.Notify(own, syscall.SIGINT, syscall.SIGTERM)
		ch = own
	}
	fire := func(s os.Signal) {
		if s == syscall.SIGTERM {
			in.fire(exit.SIGTERM, "SIGTERM")
		} else {
			in.fire(exit.SIGINT, "SIGINT")
		}
	}
	// A signal already held is taken before NotifyInterrupt returns, so
	// that a check of Err right after it sees it.
	select {
	case s := <-ch:
		fire(s)
	default:
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			fire(s)
		case <-done:
		}
	}()
	in.stop = func() {
		if own != nil {
			signal.Stop(own)
		}
		close(done)
		cancel()
	}
	return in
}

// fire records the first interruption and cancels the context.
func (in *Interrupt) fire(code int, cause string) {
	if in.code.CompareAndSwap(0, int32(code)) {
		in.at.Store(time.Now().UnixNano())
		in.cause.Store(cause)
	}
	in.cancel()
}

// Code is 130 after SIGINT or the cancel file, 143 after SIGTERM, 0 when
// nothing interrupted.
func (in *Interrupt) Code() int { return int(in.code.Load()) }

// At is when the first interruption came; zero when nothing interrupted.
func (in *Interrupt) At() time.Time {
	if ns := in.at.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Cause names what interrupted: "SIGINT", "SIGTERM", "cancel-file", or ""
// when nothing did.
func (in *Interrupt) Cause() string {
	c, _ := in.cause.Load().(string)
	return c
}

// WatchCancelFile also interrupts (code 130, cause "cancel-file") when the
// file path appears, such as .runner/cancel (seed 004, DESIGN.md decision
// 12), whether it exists already or is created later. Its directory must
// exist. The watch ends with Stop.
func (in *Interrupt) WatchCancelFile(path string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		w.Close()
		return err
	}
	name := filepath.Clean(path)
	go func() {
		defer w.Close()
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == name && ev.Has(fsnotify.Create) {
					in.fire(exit.SIGINT, CauseCancelFile)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-in.Done():
				return
			}
		}
	}()
	// After the watch is in place, so a file created in between is seen.
	if _, err := os.Lstat(path); err == nil {
		in.fire(exit.SIGINT, CauseCancelFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// CauseCancelFile is Cause after the cancel file appeared.
const CauseCancelFile = "cancel-file"

// Stop stops listening.
func (in *Interrupt) Stop() { in.stop() }

// deferSignals holds SIGINT and SIGTERM when the command runs in
// runner-step or runner-loop (lib/proc.DeferSignalsEnv): they are the
// porcelain's to act on, the command finishes its work (DESIGN.md decision
// 12).
func deferSignals() {
	if os.Getenv(proc.DeferSignalsEnv) == "1" {
		proc.DeferSignals()
	}
}
