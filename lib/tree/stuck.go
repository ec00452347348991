package tree

// StuckHint is the next step for a stuck node (a Selection with status
// stuck), as the stuck messages of tree-select, runner-step and
// runner-status give it: the operator edits that free it.
func StuckHint(id string) string {
	return "give it more with tree-edit retry " + id + " [--attempts N], or split it with tree-edit decompose " + id
}
