package agentexec

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runrecord"
)

// fallback hands the session to the backends of [agent] fallback in turn
// while the last one ended in a rate limit, an outage or refused
// authentication and the iteration's budget lasts. Each runs with its
// default executable and model and no extra arguments. Every hand-over
// is recorded in rec.Fallbacks (agent.json), noted in executor.log and
// added to the run record's log when the run has one. It returns the
// backend that ran last and its result (req is left as that backend ran
// it, for on_rate_limit = "wait"); the usage of the sessions handed
// over from is added to rec.Usage.
func fallback(env *cli.Env, in *cli.Interrupt, names []string, begin iterdir.Begin, backend agent.Backend, req *agent.Request, res agent.Result, runErr error, rec *iterdir.Agent, log io.Writer) (agent.Backend, agent.Result, error) {
	for _, name := range names {
		if runErr != nil || (!agent.Pauses(res.Class) && res.Class != agent.ClassAuth) || in.Err() != nil || !time.Now().Before(begin.Deadline) {
			break
		}
		next, err := agent.New(name)
		if err != nil {
			break // config validation admits only backends that exist
		}
		rec.Fallbacks = append(rec.Fallbacks, iterdir.Fallback{From: backend.Name(), To: name, Class: res.Class, Message: res.Message})
		rec.Usage = rec.Usage.Add(res.Usage)
		note := fmt.Sprintf("%s ended in %s (%s): the rest of the iteration goes to %s ([agent] fallback)", backend.Name(), res.Class, res.Message, name)
		env.Warnf("%s", note)
		fmt.Fprintf(log, "\n[treeloop] %s\n", note)
		logRun(env, begin.RunID, "fallback", note)
		backend = next
		req.Config.Bin, req.Config.Model, req.Config.ExtraArgs = "", "", []string{}
		res, runErr = backend.Run(in, *req)
	}
	return backend, res, runErr
}

// logRun adds an entry of kind to the log of the run's record that is
// still running (.runner/runs/<record-id>.json), when there is one; a
// failure is only warned about.
func logRun(env *cli.Env, runID, kind, message string) {
	id, ok := runrecord.CurrentOf(env.Abs(layout.Runs), runID)
	if !ok {
		return // no record: agent.json holds it
	}
	path := env.Abs(layout.RunRecord(id))
	r, err := runrecord.Load(path)
	if err != nil {
		return // no record (yet): agent.json holds it
	}
	r.AddLog(time.Now(), kind, message)
	if err := runrecord.Save(path, r); err != nil {
		env.Warnf("record the %s entry in %s: %v", kind, filepath.Base(path), err)
	}
}
