package gitfile

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ConfigInt is an integer setting's value as git reads it (git-config(1),
// "Values", integer; git's git_parse_signed): leading white space, an
// optional sign, digits in C's notation (0x for hex, a leading 0 for
// octal), and an optional unit k, m or g (times 1024 each, any case)
// ending the value; unit reports the unit. A value git would refuse (any
// other character, a trailing space, out of range) reads as def.
func ConfigInt(v string, def int) (n int, unit bool) {
	v = strings.TrimLeft(v, " \t\n\v\f\r")
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult, unit = 1<<10, true
		case 'm', 'M':
			mult, unit = 1<<20, true
		case 'g', 'G':
			mult, unit = 1<<30, true
		}
	}
	if unit {
		v = v[:len(v)-1]
	}
	x, ok := parseC(v)
	if !ok || x > math.MaxInt64/mult || x < math.MinInt64/mult {
		return def, unit
	}
	return int(x * mult), unit
}

// parseC is strtoimax(v, &end, 0) that must end at v's end: an optional
// sign, then 0x and hex digits, 0 and octal digits, or decimal digits.
func parseC(v string) (int64, bool) {
	neg := false
	if v != "" && (v[0] == '+' || v[0] == '-') {
		neg, v = v[0] == '-', v[1:]
	}
	base := 10
	switch {
	case len(v) > 2 && (v[:2] == "0x" || v[:2] == "0X"):
		base, v = 16, v[2:]
	case len(v) > 1 && v[0] == '0':
		base, v = 8, v[1:]
	}
	if v == "" || v[0] == '+' || v[0] == '-' || strings.Contains(v, "_") {
		return 0, false
	}
	x, err := strconv.ParseUint(v, base, 64)
	if err != nil || x > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(x), true
	}
	return int64(x), true
}

// ConfigFalse reports a boolean setting's value that git reads as false
// (git-config(1), "Values", boolean): false, no or off in any case, the
// empty value, or an integer that is 0 (ConfigInt). A key given without
// "=" is true; the caller knows that from the key's form, not from the
// value.
func ConfigFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "no", "off", "":
		return true
	}
	n, _ := ConfigInt(v, 1)
	return n == 0
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
