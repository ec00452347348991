package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/treeloop/treeloop/lib/exit"
)

// Interrupt is a context canceled by the first SIGINT or SIGTERM, and which
// of them arrived (seed 004, DESIGN.md decision 12). Commands that run an
// agent or a guard use it to stop the process group and record the
// iteration as interrupted instead of dying mid-write.
type Interrupt struct {
	context.Context
	code atomic.Int32
	stop func()
}

// NotifyInterrupt starts listening for SIGINT and SIGTERM. Call Stop when
// done.
func NotifyInterrupt() *Interrupt {
	ctx, cancel := context.WithCancel(context.Background())
	in := &Interrupt{Context: ctx}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			if s == syscall.SIGTERM {
				in.code.Store(exit.SIGTERM)
			} else {
				in.code.Store(exit.SIGINT)
			}
			cancel()
		case <-done:
		}
	}()
	in.stop = func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
	return in
}

// Code is 130 after SIGINT, 143 after SIGTERM, 0 when no signal arrived.
func (in *Interrupt) Code() int { return int(in.code.Load()) }

// Stop stops listening.
func (in *Interrupt) Stop() { in.stop() }
