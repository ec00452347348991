//go:build linux

package seal

import (
	"io/fs"
	"syscall"
)

// fingerprintOf is st's fingerprint; ok is false where the platform does
// not give the change time.
func fingerprintOf(st fs.FileInfo) (fingerprint, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fingerprint{}, false
	}
	return fingerprint{
		size:  st.Size(),
		mode:  uint32(st.Mode()),
		mtime: sys.Mtim.Nano(),
		ctime: sys.Ctim.Nano(),
		ino:   sys.Ino,
	}, true
}
