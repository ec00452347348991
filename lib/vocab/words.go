package vocab

// The words of each outcome field, typed once (DESIGN.md decision 22):
// every printer (text, --json, the UI's API, run records, commit
// messages, eval) takes them from here, so the same thing has the same
// word wherever it is shown. Fields lists them with their meanings for
// docs/concepts.md's table, which a test holds to this file.

// Status is an iteration's status: meta.json's status, the commit
// subject's status=, runner-step's and runner-loop's lines.
type Status string

// The iteration statuses: the agent's answer (done, retry, decomposed),
// or what ended the iteration before an answer counted.
const (
	StatusDone        Status = "done"
	StatusRetry       Status = "retry"
	StatusDecomposed  Status = "decomposed"
	StatusTimeout     Status = "timeout"
	StatusInterrupted Status = "interrupted"
	StatusRunnerError Status = "runner_error"
	// StatusBlocked: the agent asked the operator; its leaf waits for an
	// answer (no attempt consumed).
	StatusBlocked Status = "blocked"
	// StatusPaused: a usage limit or an outage ended the session with no
	// fallback left (no attempt consumed); the run pauses until the limit
	// resets, or for a backoff.
	StatusPaused Status = "paused"
)

// Result is what an iteration did to its node (tree-update): meta.json's
// and update.json's result, the result column of iter-log list,
// runner-status and the web UI.
type Result string

// The iteration results.
const (
	ResultPassed      Result = "passed"
	ResultFailed      Result = "failed"
	ResultRetry       Result = "retry"
	ResultDecomposed  Result = "decomposed"
	ResultAgentError  Result = "agent-error"
	ResultTimeout     Result = "timeout"
	ResultInterrupted Result = "interrupted"
	ResultRunnerError Result = "runner-error"
	ResultBlocked     Result = "blocked"
	ResultPaused      Result = "paused"
)

// Guard is the guard's outcome: guard.json's outcome, meta.json's guard,
// the commit subject's guard=.
type Guard string

// The guard outcomes.
const (
	GuardPass        Guard = "pass"
	GuardFail        Guard = "fail"
	GuardSkipped     Guard = "skipped"
	GuardTimeout     Guard = "timeout"
	GuardInterrupted Guard = "interrupted"
	GuardError       Guard = "error"
)

// Class is how an agent session ended: agent.json's class.
type Class string

// The failure classes.
const (
	ClassOK            Class = "ok"
	ClassTimeout       Class = "timeout"
	ClassHang          Class = "hang"
	ClassInterrupted   Class = "interrupted"
	ClassStartError    Class = "start_error"
	ClassConfig        Class = "config"
	ClassNoOutput      Class = "no_output"
	ClassInvalidOutput Class = "invalid_output"
	ClassAuth          Class = "auth"
	ClassRateLimit     Class = "rate_limit"
	ClassAPIError      Class = "api_error"
	// ClassOutage: the provider could not be reached or failed on its
	// side (connection refused or reset, DNS, HTTP 5xx, overloaded).
	ClassOutage     Class = "outage"
	ClassTurnLimit  Class = "turn_limit"
	ClassPermission Class = "permission"
	ClassPolicy     Class = "policy"
)

// RunStatus is a run's status: the run record's status, runner-status's
// status and runs table.
type RunStatus string

// The run statuses.
const (
	RunRunning     RunStatus = "running"
	RunComplete    RunStatus = "complete"
	RunStuck       RunStatus = "stuck"
	RunLimit       RunStatus = "limit"
	RunTimeout     RunStatus = "timeout"
	RunInterrupted RunStatus = "interrupted"
	RunCanceled    RunStatus = "canceled"
	RunError       RunStatus = "error"
	// RunPaused: a usage limit or an outage; running, the runner sleeps
	// until the record's pause.until; finished, the loop stopped on it
	// (--no-pause).
	RunPaused RunStatus = "paused"
	// RunWaiting: every open leaf waits for an operator's answer;
	// running, the runner waits for one (--wait); finished, the loop
	// stopped on it.
	RunWaiting RunStatus = "waiting"
)

// PauseCause is why the run pauses: the run record's pause.cause,
// runner-record pause's and runner-loop's reason=, on_pause's
// RUNNER_PAUSE_REASON.
type PauseCause string

// The pause causes.
const (
	PauseUsageLimit PauseCause = "usage-limit"
	PauseOutage     PauseCause = "outage"
)

// Outcome is an eval attempt's outcome: eval-run's meta.json, summary and
// report.
type Outcome string

// The eval outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomeFail    Outcome = "fail"
	OutcomeStuck   Outcome = "stuck"
	OutcomeLimit   Outcome = "limit"
	OutcomeTimeout Outcome = "timeout"
	OutcomeError   Outcome = "error"
)

// Phase is what an iteration in progress is doing: runner-status's and
// iter-log list's running.phase.
type Phase string

// The phases.
const (
	PhaseAgent  Phase = "agent"
	PhaseGuard  Phase = "guard"
	PhaseRecord Phase = "record"
)

// Node is a node's state in the task tree: runner-status's counts, the
// pull request body of runner-export, the web UI's tree.
type Node string

// The node states.
const (
	NodePassed Node = "passed"
	NodeOpen   Node = "open"
	NodeStuck  Node = "stuck"
	// NodeWaiting: an open leaf that waits for an operator's answer
	// (counted open in the run record's counts).
	NodeWaiting Node = "waiting"
)

// Containment is what held a session's processes (the agent's, the
// guard's), so that none outlived it: agent.json's and guard.json's
// contained.
type Containment string

// The containments.
const (
	ContainedPIDNamespace Containment = "pid-namespace"
	ContainedBwrap        Containment = "bwrap"
	ContainedContainer    Containment = "container"
	ContainedSubreaper    Containment = "subreaper"
)

// Word is one word of a field and what it means.
type Word struct {
	Word    string
	Meaning string
}

// Field is one outcome field: its name, where it is shown, its words.
type Field struct {
	Name  string
	Where string
	Words []Word
}

// Fields are the outcome fields and their words, in docs/concepts.md's order.
var Fields = []Field{
	{"iteration status", "meta.json `status`, commit subjects `status=`, `runner-step`/`runner-loop` lines", []Word{
		{string(StatusDone), "the agent said its leaf is done (the guard then ran)"},
		{string(StatusRetry), "the agent asked for another attempt, or its answer was an agent error"},
		{string(StatusDecomposed), "the agent split its leaf into children"},
		{string(StatusTimeout), "the iteration's budget ran out"},
		{string(StatusInterrupted), "a signal or a cancel request stopped it"},
		{string(StatusRunnerError), "the runner failed (no attempt consumed)"},
		{string(StatusBlocked), "the agent asked the operator: its leaf waits for an answer (no attempt consumed)"},
		{string(StatusPaused), "a usage limit or an outage ended the session (no attempt consumed): the run pauses until the limit resets, or for a backoff"},
	}},
	{"result", "meta.json and update.json `result`, the result column of `iter-log list`, `runner-status` and the web UI", []Word{
		{string(ResultPassed), "done and the guard passed: the node passed"},
		{string(ResultFailed), "done and the guard failed (attempt consumed)"},
		{string(ResultRetry), "the agent asked for another attempt (attempt consumed)"},
		{string(ResultDecomposed), "children inserted"},
		{string(ResultAgentError), "an invalid answer or a broken rule (attempt consumed, tree restored)"},
		{string(ResultTimeout), "the budget ran out (no attempt consumed)"},
		{string(ResultInterrupted), "stopped by a signal or a cancel (no attempt consumed)"},
		{string(ResultRunnerError), "the runner failed (no attempt consumed)"},
		{string(ResultBlocked), "the leaf waits for an operator's answer (no attempt consumed)"},
		{string(ResultPaused), "a usage limit or an outage (no attempt consumed, tree as it was)"},
	}},
	{"guard", "guard.json `outcome`, meta.json `guard`, commit subjects `guard=`", []Word{
		{string(GuardPass), "the guard exited 0 (and the test ratchet held)"},
		{string(GuardFail), "the guard failed"},
		{string(GuardSkipped), "no guard ran (the agent was not done)"},
		{string(GuardTimeout), "the budget ran out during the guard"},
		{string(GuardInterrupted), "stopped during the guard"},
		{string(GuardError), "the guard could not run (a runner error)"},
	}},
	{"failure class", "agent.json `class`", []Word{
		{string(ClassOK), "the session ended with an answer"},
		{string(ClassTimeout), "the iteration's budget ran out"},
		{string(ClassHang), "silent for `agent_idle_timeout_secs`"},
		{string(ClassInterrupted), "a signal or a cancel request"},
		{string(ClassStartError), "the CLI could not start (runner error)"},
		{string(ClassConfig), "the CLI refused its settings, input or workspace (runner error)"},
		{string(ClassNoOutput), "no answer"},
		{string(ClassInvalidOutput), "an answer the schema or the mode refuses"},
		{string(ClassAuth), "authentication failed (runner error)"},
		{string(ClassRateLimit), "a usage or rate limit (no attempt consumed: with no fallback left, the iteration pauses)"},
		{string(ClassAPIError), "the API refused the request (runner error)"},
		{string(ClassOutage), "the provider could not be reached or failed on its side: connection refused or reset, DNS, HTTP 5xx, overloaded (no attempt consumed: with no fallback left, the iteration pauses)"},
		{string(ClassTurnLimit), "the CLI's turn limit"},
		{string(ClassPermission), "no answer after the CLI denied tools"},
		{string(ClassPolicy), "a protected path or a moved HEAD"},
	}},
	{"run status", "run records `status`, `runner-status` (`none` before a record), `runner-status --runs`", []Word{
		{string(RunRunning), "a runner works, or waits for the next runner-step"},
		{string(RunComplete), "the tree is complete"},
		{string(RunStuck), "a leaf has no attempts left"},
		{string(RunLimit), "`max_iterations`, a run budget or `--max-steps`"},
		{string(RunTimeout), "an iteration timed out"},
		{string(RunInterrupted), "SIGINT or SIGTERM, or the runner is gone"},
		{string(RunCanceled), "a cancel request"},
		{string(RunError), "a runner error or a refusal"},
		{string(RunPaused), "a usage limit or an outage: the runner sleeps until the limit resets or for a backoff (or stopped on it with `--no-pause`)"},
		{string(RunWaiting), "every open leaf waits for an operator's answer (the runner waits with `--wait`, else it stopped)"},
	}},
	{"pause cause", "run records `pause.cause`, `runner-status`, `runner-loop`'s `loop: paused reason=`, `on_pause`'s `RUNNER_PAUSE_REASON`", []Word{
		{string(PauseUsageLimit), "a session ended in `rate_limit`: the pause lasts until the reset it reported (at most `max_pause`), else a backoff"},
		{string(PauseOutage), "a session ended in `outage`: the pause is a backoff, 10 s doubling up to 15 minutes"},
	}},
	{"eval outcome", "eval-run's meta.json `outcome`, summaries, `eval-report`", []Word{
		{string(OutcomeSuccess), "complete and every check passed"},
		{string(OutcomeFail), "complete and a check failed"},
		{string(OutcomeStuck), "the loop ended stuck"},
		{string(OutcomeLimit), "the loop hit a limit"},
		{string(OutcomeTimeout), "an iteration or the case timed out"},
		{string(OutcomeError), "anything else, the harness's own failures included"},
	}},
	{"phase", "`running.phase` of `runner-status` and `iter-log list --json`", []Word{
		{string(PhaseAgent), "the agent's session runs"},
		{string(PhaseGuard), "the guard runs"},
		{string(PhaseRecord), "both ended: the iteration is recorded and committed"},
	}},
	{"node state", "`runner-status` and run records' node counts, the PR body of `runner-export`, the web UI's tree", []Word{
		{string(NodePassed), "passed through a green guard (an inner node: all its children)"},
		{string(NodeOpen), "not passed, attempts left"},
		{string(NodeStuck), "a leaf with no attempts left"},
		{string(NodeWaiting), "an open leaf that waits for an operator's answer"},
	}},
	{"containment", "agent.json and guard.json `contained`", []Word{
		{string(ContainedPIDNamespace), "a PID namespace of its own under the runner's session init: nothing it started outlived it"},
		{string(ContainedBwrap), "bubblewrap's PID namespace (`[sandbox] mode = \"bwrap\"`): nothing it started outlived it"},
		{string(ContainedContainer), "a container, removed after the session (`[sandbox] mode = \"docker\"`)"},
		{string(ContainedSubreaper), "the fallback where the kernel refused a PID namespace: a child subreaper and the iteration's tag in the environment held it, which a process that clears its environment and outlives a killed runner escapes"},
	}},
}

// StatusOf is the iteration status an iteration with result r has: an
// agent error counts as retry (DESIGN.md decision 5).
func StatusOf(r Result) Status {
	switch r {
	case ResultPassed, ResultFailed:
		return StatusDone
	case ResultDecomposed:
		return StatusDecomposed
	case ResultTimeout:
		return StatusTimeout
	case ResultInterrupted:
		return StatusInterrupted
	case ResultRunnerError:
		return StatusRunnerError
	case ResultBlocked:
		return StatusBlocked
	case ResultPaused:
		return StatusPaused
	}
	return StatusRetry
}

// Markdown is docs/concepts.md's table of the outcome fields: one row per field,
// each word with its meaning.
func Markdown() string {
	var b []byte
	b = append(b, "| field | words | shown in |\n| --- | --- | --- |\n"...)
	for _, f := range Fields {
		b = append(b, "| "+f.Name+" | "...)
		for i, w := range f.Words {
			if i > 0 {
				b = append(b, "; "...)
			}
			b = append(b, "`"+w.Word+"` "+w.Meaning...)
		}
		b = append(b, " | "+f.Where+" |\n"...)
	}
	return string(b)
}
