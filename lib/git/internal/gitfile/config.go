package gitfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ConfigInt is an integer setting's value as git reads it (git-config(1),
// "Values", integer): decimal digits with an optional k, m or g (times
// 1024 each, any case); unit reports the suffix. A value git would refuse
// reads as def.
func ConfigInt(v string, def int) (n int, unit bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := 1
	if v != "" {
		switch v[len(v)-1] {
		case 'k':
			mult, unit = 1<<10, true
		case 'm':
			mult, unit = 1<<20, true
		case 'g':
			mult, unit = 1<<30, true
		}
	}
	if unit {
		v = v[:len(v)-1]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def, unit
	}
	return n * mult, unit
}

// ConfigFalse reports a boolean setting's value that git reads as false
// (git-config(1), "Values", boolean: false, no, off, 0, or empty, any
// case). A key given without "=" is true; the caller knows that from the
// key's form, not from the value.
func ConfigFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return true
	}
	return false
}

// LooseObjects counts the loose objects in one fan-out directory of the
// object directory objects (gitrepository-layout(5):
// objects/[0-9a-f][0-9a-f], each object a file named by the rest of its
// id: 38 hex digits, or 62 in a SHA-256 repository). An unreadable or
// missing directory counts 0.
func LooseObjects(objects, fanout string) int {
	entries, err := os.ReadDir(filepath.Join(objects, fanout))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if name := e.Name(); len(name) == 38 || len(name) == 62 {
			n++
		}
	}
	return n
}
