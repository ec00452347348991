package fsutil

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only, populated (MAP_POPULATE).
func mapFile(f *os.File, size int) (data []byte, unmap func(), ok bool) {
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { syscall.Munmap(data) }, true
}
