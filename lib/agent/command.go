package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/proc"
)

// Command is the `command` backend: any executable (agent.bin plus
// agent.extra_args). The prompt pack arrives on stdin; RUNNER_* variables
// name the repository, the iteration directory, the output path, the node
// and the mode (see Env), RUNNER_AGENT_MODEL the configured model; the
// executable writes one JSON object to $RUNNER_OUTPUT before it exits: its
// answer, or a failure report (FailureReport) when its session failed for
// a reason that is not its own, such as a usage limit.
type Command struct{}

// Name is "command".
func (Command) Name() string { return "command" }

// commandSpec is the command backend's row of Specs: it runs [agent]
// bin, has no event stream and no settings of its own.
var commandSpec = Spec{Name: "command", New: func() Backend { return Command{} }}

// Run runs the executable and reads $RUNNER_OUTPUT.
func (Command) Run(ctx context.Context, req Request) (Result, error) {
	if req.Config.Bin == "" {
		return Result{}, errors.New("the command backend needs an executable: set [agent] bin in config.toml or RUNNER_AGENT_BIN")
	}
	argv := append([]string{req.Config.Bin}, req.Config.ExtraArgs...)
	env := Env(os.Environ(), req)
	if req.Config.Model != "" {
		env = append(env, "RUNNER_AGENT_MODEL="+req.Config.Model)
	}
	res := Result{Argv: argv, Model: req.Config.Model}
	run, err := req.command(argv, env)
	if err != nil {
		return res, err
	}
	spec := proc.Spec{
		Argv: run, Dir: req.Root, Env: env, Stdin: bytes.NewReader(req.Prompt),
		Log: req.Log, Tee: req.Tee, Deadline: req.Deadline, IdleTimeout: req.IdleTimeout,
		KillEscaped: !req.InContainer, OwnNamespace: req.Sandbox != nil,
	}
	req.restartable(&spec)
	pr, err := proc.Run(ctx, spec)
	res.Proc = pr
	if err != nil {
		return res, err
	}
	if c, msg := ProcessClass(pr); c != "" {
		res.Class, res.Message = c, msg
		return res, nil
	}
	res.Output, res.Class, res.Message = ReadOutputFile(req.OutputPath)
	if f, ok := FailureReport(res.Output); ok {
		res.Output, res.Class, res.Message, res.ResetAt = nil, f.Class, f.Message, f.ResetAt
		if res.Message == "" {
			res.Message = "the agent reported " + f.Class
		}
	}
	return res, nil
}

// Failure is a command agent's failure report (schemas/agent_failure.v1):
// a class that is not the agent's fault, with a message and, for a usage
// limit, when it resets.
type Failure struct {
	Class   string
	Message string
	ResetAt string // RFC 3339, "" when not given
}

// FailureReport reads data as a failure report, {"error": {"class":
// "rate_limit"|"auth"|"api_error", "message"?, "reset_at"?}} exactly: ok is
// false for anything else (an agent output, or a malformed report, which
// is then judged as an output and refused). It is the schema's plain check
// (failure_gen.go, generated from schemas/agent_failure.v1.schema.json),
// and reset_at an RFC 3339 time; TestFailureReportAgreesWithSchema holds
// it to the full validator.
//
//go:generate go run ../schema/internal/schemagen -schema agent_failure.v1 -check failureCheck -o failure_gen.go
func FailureReport(data []byte) (Failure, bool) {
	if len(data) == 0 || !bytes.Contains(data, []byte(`"error"`)) {
		return Failure{}, false
	}
	v, err := jsonstrict.Decode(data)
	if err != nil || failureCheck(v) != "" {
		return Failure{}, false
	}
	e := v.(map[string]any)["error"].(map[string]any)
	f := Failure{Class: e["class"].(string)}
	if s, ok := e["message"].(string); ok {
		f.Message = strings.Join(strings.Fields(s), " ")
	}
	if s, ok := e["reset_at"].(string); ok {
		if !validTime(s) {
			return Failure{}, false
		}
		f.ResetAt = s
	}
	return f, true
}

// validTime reports whether s is an RFC 3339 date-time.
func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}
