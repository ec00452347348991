// Package schema names treeloop's embedded JSON Schemas (draft 2020-12) and
// words schema problems where a program links the full validator,
// santhosh-tekuri/jsonschema/v5, which lives in lib/schema/full (its
// Validate) so that only the programs that validate against a schema pay
// for it, and each of them links it by importing it.
package schema

import (
	"strings"

	"github.com/treeloop/treeloop/schemas"
)

// Kind names one embedded schema.
type Kind string

// The embedded schemas.
const (
	TaskTree     Kind = "task_tree.v1"
	AgentOutput  Kind = "agent_output.v1"
	RunState     Kind = "run_state.v1"
	RunRecord    Kind = "run_record.v1"
	RunnerStatus Kind = "runner_status.v1"
	RunnerExport Kind = "runner_export.v1"
	EvalResult   Kind = "eval_result.v1"
	EvalSummary  Kind = "eval_summary.v1"
	NodeTools    Kind = "node_tools.v1"
	QueuedAnswer Kind = "queued_answer.v1"
	AgentFailure Kind = "agent_failure.v1"
)

// Source returns the embedded schema bytes for k.
func Source(k Kind) []byte {
	switch k {
	case TaskTree:
		return schemas.TaskTreeV1
	case AgentOutput:
		return schemas.AgentOutputV1
	case RunState:
		return schemas.RunStateV1
	case RunRecord:
		return schemas.RunRecordV1
	case RunnerStatus:
		return schemas.RunnerStatusV1
	case RunnerExport:
		return schemas.RunnerExportV1
	case EvalResult:
		return schemas.EvalResultV1
	case EvalSummary:
		return schemas.EvalSummaryV1
	case NodeTools:
		return schemas.NodeToolsV1
	case QueuedAnswer:
		return schemas.QueuedAnswerV1
	case AgentFailure:
		return schemas.AgentFailureV1
	}
	panic("schema: unknown kind " + string(k))
}

// Violation is one schema error: where in the instance (a JSON pointer such as
// "/children/0/attempts") and what is wrong.
type Violation struct {
	Pointer string
	Message string
}

// validator is the full validator, set by lib/schema/full's init in the
// programs that link it.
var validator func(Kind, any) []Violation

// SetValidator installs the full validator (lib/schema/full calls it from
// its init; tests take it away to see a program without it) and returns
// the one it replaces.
func SetValidator(f func(Kind, any) []Violation) (previous func(Kind, any) []Violation) {
	previous, validator = validator, f
	return previous
}

// Linked reports whether this program links the full validator
// (lib/schema/full). Commands that only read files the runner wrote take
// the strict fast paths (lib/tree/fast.go, runstate's check) and do not
// link it: santhosh-tekuri/jsonschema/v5's package init compiles every
// draft's meta-schema at every process start (bench/fastpaths.md).
func Linked() bool { return validator != nil }

// Words returns every violation of v against the schema k, as
// full.Validate does, where the program links the full validator, and
// linked false elsewhere. It is for readers whose own check is complete
// (the fast paths) and who word a refusal by the schema when they can.
// A reader whose only check is the schema calls full.Validate, which
// makes its program link the validator: there is no validation here that
// a program can reach without it.
func Words(k Kind, v any) (vs []Violation, linked bool) {
	if validator == nil {
		return nil, false
	}
	return validator(k, v), true
}

// AgentOutputMaxBytes is the size limit of an agent's output file (1 MiB),
// here so that what reads the file (lib/agent) does not link the
// validator that judges it (lib/agentout).
const AgentOutputMaxBytes = 1 << 20

// Pointer splits a JSON pointer (RFC 6901) into its unescaped tokens.
func Pointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		s = strings.ReplaceAll(s, "~1", "/")
		parts[i] = strings.ReplaceAll(s, "~0", "~")
	}
	return parts
}
