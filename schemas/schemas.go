// Package schemas embeds treeloop's JSON Schemas (draft 2020-12). The
// binaries enforce these embedded copies; .runner/state/*.json copies are for
// humans and editors only (DESIGN.md decision 10).
package schemas

import _ "embed"

// TaskTreeV1 is the task tree schema (seed 002, DESIGN.md decisions 2 and 8).
//
//go:embed task_tree.v1.schema.json
var TaskTreeV1 []byte

// AgentOutputV1 is the agent output schema (DESIGN.md decision 3).
//
//go:embed agent_output.v1.schema.json
var AgentOutputV1 []byte

// RunStateV1 is the run_state.json schema (seed 000 section 3.1).
//
//go:embed run_state.v1.schema.json
var RunStateV1 []byte

// RunRecordV1 is the run record schema (.runner/runs/<run-id>.json, seed 004
// "run records", DESIGN.md decision 15).
//
//go:embed run_record.v1.schema.json
var RunRecordV1 []byte

// RunnerStatusV1 is what runner-status --json prints.
//
//go:embed runner_status.v1.schema.json
var RunnerStatusV1 []byte

// RunnerExportV1 is what runner-export --json prints (DESIGN.md decision 23).
//
//go:embed runner_export.v1.schema.json
var RunnerExportV1 []byte

// EvalResultV1 is an eval attempt's meta.json (seed 000 §13.5).
//
//go:embed eval_result.v1.schema.json
var EvalResultV1 []byte

// NodeToolsV1 is a node's agent settings sidecar,
// .runner/nodes/<id>/tools.json (seed 000 §3.4).
//
//go:embed node_tools.v1.schema.json
var NodeToolsV1 []byte

// EvalSummaryV1 is an eval run's summary-<eval-run-id>.json (seed 000 §13).
//
//go:embed eval_summary.v1.schema.json
var EvalSummaryV1 []byte

// QueuedAnswerV1 is an operator's answer queued in .runner/answers/ while
// a runner works (tree-edit answer).
//
//go:embed queued_answer.v1.schema.json
var QueuedAnswerV1 []byte

// AgentFailureV1 is the failure report a command-backend agent may write to
// $RUNNER_OUTPUT instead of an agent output (a usage limit, say).
//
//go:embed agent_failure.v1.schema.json
var AgentFailureV1 []byte
