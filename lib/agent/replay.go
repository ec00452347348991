package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/proc"
)

// A cassette is a directory of recorded sessions, one subdirectory per
// iteration ("0001", "0002", …), each holding session.json (how the
// session ended, as the backend reported it), output.json (the answer, if
// any), events.jsonl (the CLI's event stream, if any) and changes.patch
// (what the session changed in the work tree, after agent-exec put back
// protected paths, HEAD and the branch). Any backend records into the
// cassette named by [agent] cassette; the replay backend plays it back,
// offline and deterministically.
const (
	CassetteSession = "session.json"
	CassetteOutput  = "output.json"
	CassetteEvents  = "events.jsonl"
	CassettePatch   = "changes.patch"
)

// Session is a cassette's session.json.
type Session struct {
	Version    int           `json:"version"`
	Backend    string        `json:"backend"`
	CLIVersion string        `json:"cli_version,omitempty"`
	Model      string        `json:"model,omitempty"`
	Class      string        `json:"class"` // the backend's class; "" = the output was judged
	Message    string        `json:"message,omitempty"`
	ResetAt    string        `json:"reset_at,omitempty"`
	ExitCode   int           `json:"exit_code"`
	Usage      iterdir.Usage `json:"usage"`
}

// CassetteDir is the directory of iteration n's session in cassette,
// which is resolved against root when relative. It refuses a cassette
// inside the repository's work tree (a recording there would be committed
// with the work it records).
func CassetteDir(root, cassette string, n int) (string, error) {
	dir := cassette
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	dir = filepath.Clean(dir)
	if rel, err := filepath.Rel(root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("the cassette %s is inside the repository: put it outside the work tree", cassette)
	}
	return filepath.Join(dir, fmt.Sprintf("%04d", n)), nil
}

// Record stores one session in dir (created; an existing recording of the
// same iteration is replaced whole). eventsPath may name a missing file.
func Record(dir string, s Session, output []byte, eventsPath string, patch []byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.Version = 1
	data, err := jsondoc.Marshal(s)
	if err != nil {
		return err
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, CassetteSession), data, 0o644); err != nil {
		return err
	}
	if output != nil {
		if err := fsutil.WriteAtomic(filepath.Join(dir, CassetteOutput), output, 0o644); err != nil {
			return err
		}
	}
	if ev, err := os.ReadFile(eventsPath); err == nil {
		if err := fsutil.WriteAtomic(filepath.Join(dir, CassetteEvents), ev, 0o644); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsutil.WriteAtomic(filepath.Join(dir, CassettePatch), patch, 0o644)
}

// Replay is the `replay` backend: it plays back the session recorded for
// this iteration in [agent] cassette. It applies the recorded changes to
// the work tree, copies the events, and reports the recorded answer and
// class, so that agent-exec judges it exactly as it judged the original.
// No process runs and nothing leaves the machine.
type Replay struct{}

// Name is "replay".
func (Replay) Name() string { return "replay" }

// replaySpec is the replay backend's row of Specs: it runs nothing, and
// reports what its recording holds.
var replaySpec = Spec{Name: "replay", New: func() Backend { return Replay{} }, RunsNothing: true, Tokens: true, Cost: true, Streams: true}

// Run plays the iteration's session back.
func (Replay) Run(ctx context.Context, req Request) (Result, error) {
	if req.Config.Cassette == "" {
		return Result{}, errors.New("the replay backend needs a cassette: set [agent] cassette in config.toml or RUNNER_AGENT_CASSETTE")
	}
	dir, err := CassetteDir(req.Root, req.Config.Cassette, req.Iteration)
	if err != nil {
		return Result{}, err
	}
	res := Result{Argv: []string{"replay", dir}}
	data, err := os.ReadFile(filepath.Join(dir, CassetteSession))
	if errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("no recorded session for iteration %d in %s", req.Iteration, req.Config.Cassette)
	}
	if err != nil {
		return res, err
	}
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
		return res, fmt.Errorf("%s: %v", filepath.Join(dir, CassetteSession), err)
	}
	if err := ctx.Err(); err != nil {
		res.Class, res.Message = ClassInterrupted, "agent interrupted"
		return res, nil
	}
	patch, err := os.ReadFile(filepath.Join(dir, CassettePatch))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	repo, err := git.Open(req.Root)
	if err != nil {
		return res, err
	}
	if err := repo.ApplyPatch(patch); err != nil {
		return res, fmt.Errorf("replay iteration %d: the recorded changes do not apply: %v", req.Iteration, err)
	}
	if ev, err := os.ReadFile(filepath.Join(dir, CassetteEvents)); err == nil && req.Events != nil {
		req.Events.Write(ev)
	}
	if req.Log != nil {
		fmt.Fprintf(req.Log, "[treeloop] replayed the %s session recorded in %s\n", s.Backend, dir)
	}
	res.Proc = proc.Result{ExitCode: s.ExitCode}
	res.Class, res.Message, res.ResetAt, res.Usage = s.Class, s.Message, s.ResetAt, s.Usage
	res.CLIVersion, res.Model = s.CLIVersion, s.Model
	if out, err := os.ReadFile(filepath.Join(dir, CassetteOutput)); err == nil {
		res.Output = out
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	return res, nil
}
