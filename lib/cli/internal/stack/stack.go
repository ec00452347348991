// Package stack grows the main goroutine's stack once, while the program
// starts, to the size a command's run needs.
//
// A goroutine starts with a 2 KiB stack and doubles it whenever a call
// does not fit: every command's main goroutine went 2 → 4 → 8 → 16 KiB
// (32 KiB for iter-log list and recover) during package initialisation,
// kong's model building and the run, and each growth copies the stack and
// walks every frame on it through the binary's function tables, pages the
// process had not touched yet. Growing once here, with next to nothing on
// the stack, costs one copy of a few frames, and saves CPU at every command
// start (bench/fastpaths.md, measured by bench/start-bench.sh with the
// base revision side by side). The stack's pages are only touched as they
// are used.
//
// The package imports nothing, so it is among the first initialised (the
// linker initialises ready packages in import path order), before the
// packages whose initialisation recurses deepest (kong, regexp, the JSON
// schema library). Importing it (for its side effect) is enough.
package stack

// frame is the frame size of grow: the runtime doubles the 2 KiB stack
// until it fits, so the stack becomes 64 KiB.
const frame = 48 << 10

func init() { grow(0) }

// grow has a frame of at least frame bytes, so calling it makes the runtime
// grow the stack to hold it; the array is only written when n > 0 (never),
// so no page of it is touched.
//
//go:noinline
func grow(n int) byte {
	if n > 0 {
		var buf [frame]byte
		buf[n%frame] = byte(n)
		return buf[(n/2)%frame]
	}
	return 0
}
