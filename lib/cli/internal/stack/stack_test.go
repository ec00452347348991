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

// grow(n), n > 0, writes byte(n) at n%frame of its frame and reads back
// (n/2)%frame: the byte it wrote when the two are the same index
// (2*frame-1, 4*frame-1: both frame-1; byte(n) is 0xff), else one never
// written.
func TestGrowWritesOnlyWhenAsked(t *testing.T) {
	for n, want := range map[int]byte{0: 0, 1: 0, 2: 0, 3: 0, 2*frame - 1: 0xff, 4*frame - 1: 0xff} {
		if got := grow(n); got != want {
			t.Errorf("grow(%d) = %d, want %d", n, got, want)
		}
	}
}
