// Package pathglob matches the globs of protected_paths against
// repository-relative paths (DESIGN.md decision 25): path.Match's syntax
// element by element ("*", "?", "[...]" never cross a "/"), and an element
// that is exactly "**" matching any number of elements, none included
// ("**/conftest.py" is conftest.py at any depth). Without a "**" element
// a glob means what path.Match gives it.
package pathglob

import (
	"path"
	"strings"
)

// Any is the element that matches any number of path elements.
const Any = "**"

// Match reports whether the slash-separated path p matches glob. A
// malformed glob matches nothing (Validate says why).
func Match(glob, p string) bool {
	if !strings.Contains(glob, Any) {
		m, _ := path.Match(glob, p)
		return m
	}
	return match(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func match(gs, ps []string) bool {
	for len(gs) > 0 {
		if gs[0] == Any {
			for len(gs) > 1 && gs[1] == Any {
				gs = gs[1:]
			}
			if len(gs) == 1 {
				return true
			}
			for i := range len(ps) + 1 {
				if match(gs[1:], ps[i:]) {
					return true
				}
			}
			return false
		}
		if len(ps) == 0 {
			return false
		}
		if m, _ := path.Match(gs[0], ps[0]); !m {
			return false
		}
		gs, ps = gs[1:], ps[1:]
	}
	return len(ps) == 0
}

// Validate reports a malformed glob: an element path.Match refuses.
func Validate(glob string) error {
	for _, e := range strings.Split(glob, "/") {
		if _, err := path.Match(e, ""); err != nil {
			return err
		}
	}
	return nil
}
