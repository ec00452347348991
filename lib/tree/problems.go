package tree

import (
	"cmp"
	"slices"
	"strings"
)

// Validation layers (seed 002), in the order they run.
const (
	LayerJSON          = "json"
	LayerSchema        = "schema"
	LayerInvariant     = "invariant"
	LayerImmutability  = "immutability"
	LayerChildAddition = "child-addition"
	LayerStatus        = "status"
	// LayerProvenance: a passed node the run's history does not back
	// (lib/provenance, tree-validate --audit).
	LayerProvenance = "provenance"
)

// Problem is one validation error. Path is the node path ("root/a/b"), empty
// when the error concerns the whole document.
type Problem struct {
	Layer   string `json:"layer"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems is a list of validation errors; as an error it joins them with "; ".
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// Sorted returns the problems sorted by (path, layer, message), duplicates
// removed: the stable order every report uses (002: errors are sorted).
func (ps Problems) Sorted() Problems {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Problem) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Layer, b.Layer); c != 0 {
			return c
		}
		return cmp.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}
