package fsutil

import "runtime/debug"

// MapThreshold is the size from which MapFile maps a file instead of
// reading it (256 KiB).
const MapThreshold = 256 << 10

// MapFile is ReadFile for the large, read-once inputs (task trees): the
// same checks (root, limit, not a directory), but a regular file of at
// least MapThreshold bytes is mapped read-only and populated in one call
// rather than copied into fresh heap, where every 4 KiB page costs a fault
// (bench/fastpaths.md). Smaller files, and systems without mmap, are read
// as ReadFile does.
//
// data is valid until release is called and must not be written or kept:
// callers copy what they need (tree.Load does). A file truncated while
// mapped faults on access; until release the calling goroutine turns such
// a fault into a panic (debug.SetPanicOnFault), which cli.Run reports as
// one line. release is never nil.
func MapFile(path, root string, limit int64) (data []byte, release func(), err error) {
	f, st, limit, err := openFile(path, root, limit)
	if err != nil {
		return nil, func() {}, err
	}
	defer f.Close()
	if st.Mode().IsRegular() && st.Size() >= MapThreshold && st.Size() <= limit {
		if data, unmap, ok := mapFile(f, int(st.Size())); ok {
			fault := debug.SetPanicOnFault(true)
			return data, func() { debug.SetPanicOnFault(fault); unmap() }, nil
		}
	}
	data, err = readOpen(f, st, limit)
	return data, func() {}, err
}
