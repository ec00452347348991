//go:build !linux

package fsutil

import "os"

// mapFile is not used here: MapFile reads the file.
func mapFile(*os.File, int) ([]byte, func(), bool) { return nil, nil, false }
