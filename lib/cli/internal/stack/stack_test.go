package stack

import (
	"testing"
	"unsafe"
)

// depth recurses until about n bytes of stack are in use.
//
//go:noinline
func depth(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n <= 256 {
		return int(pad[0])
	}
	return depth(n-256) + int(pad[n%256])
}

// moved reports whether a run of about 40 KiB of frames made the runtime
// copy the calling goroutine's stack (a local's address changes), after
// grow when pregrow is set.
func moved(pregrow bool) bool {
	ch := make(chan bool)
	go func() { // a fresh goroutine: a 2 KiB stack, like main's at start
		if pregrow {
			grow(0)
		}
		var local int
		before := uintptr(unsafe.Pointer(&local))
		depth(40 << 10)
		ch <- uintptr(unsafe.Pointer(&local)) != before
	}()
	return <-ch
}

// TestGrowHoldsTheRun: after grow, a command's deepest run (about 40 KiB of
// frames; iter-log list reaches 32 KiB) needs no further growth, where a
// goroutine that did not grow its stack copies it.
func TestGrowHoldsTheRun(t *testing.T) {
	if !moved(false) {
		t.Fatal("40 KiB of frames did not grow a fresh goroutine's stack: the test measures nothing")
	}
	if moved(true) {
		t.Error("the stack was copied after grow: grow did not make it large enough")
	}
}
