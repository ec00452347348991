package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/jsondoc"
)

// Kinds are the embedded schemas, as Source knows them.
var Kinds = []Kind{TaskTree, AgentOutput, RunState, RunRecord, RunnerStatus, RunnerExport, EvalResult, EvalSummary, NodeTools, QueuedAnswer, AgentFailure}

// WordsHelper is the program that words a document's violations for a
// program that does not link the full validator (WordsOrHelper): it is
// looked for beside this program's executable, where every treeloop
// command is built and installed together, never on $PATH.
const WordsHelper = "tree-validate"

// WordsFlag is the helper's hidden flag: `tree-validate --schema-words
// KIND` reads one JSON document on stdin and prints its violations of
// the schema KIND on stdout as a JSON array of {"pointer", "message"}
// (HelperViolation), [] when there are none.
const WordsFlag = "--schema-words"

// HelperViolation is one violation as the helper prints it.
type HelperViolation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// helperTimeout bounds the helper's run: a refusal is worded by the
// caller's own check rather than wait on it.
const helperTimeout = 10 * time.Second

// WordsOrHelper is Words where this program links the full validator,
// elsewhere the violations of v against k as WordsHelper words them; ok
// is false when neither can (no helper beside the executable, or it
// failed, or took longer than helperTimeout): the caller then says its
// own check's problem. It is for programs whose plain check has refused
// v and that word the refusal as a program linking the validator would,
// without paying the validator's package init at every start (agent-exec
// and step-end, for an agent's output and a node's tools.json).
func WordsOrHelper(k Kind, v any) (vs []Violation, ok bool) {
	if validator != nil {
		return validator(k, v), true
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, false
	}
	doc, err := jsondoc.Compact(v)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), WordsHelper), WordsFlag, string(k))
	cmd.Stdin = bytes.NewReader(doc)
	cmd.WaitDelay = time.Second // a child it left holding stdout does not hold this
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var hv []HelperViolation
	if err := json.Unmarshal(out, &hv); err != nil {
		return nil, false
	}
	for _, x := range hv {
		vs = append(vs, Violation{Pointer: x.Pointer, Message: x.Message})
	}
	return vs, true
}
