package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/tree"
)

// maxAnswerBody bounds POST /api/answer's body.
const maxAnswerBody = 256 << 10

// answerTimeout bounds tree-edit answer's run (a commit, or a queued file).
const answerTimeout = 30 * time.Second

// handleAnswer is POST /api/answer {"id", "answer"} (DESIGN.md decision
// 17): with AllowAnswer, from this server's own page, it runs tree-edit
// answer ID --file - --by runner-ui with the answer on stdin, which
// commits it when no runner holds the lock and queues it for the runner
// otherwise. The reply says which: {"version": 1, "id", "answer":
// "committed"|"queued"}; a refusal (the node does not wait, say) is 409
// with tree-edit's message.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowAnswer {
		writeError(w, http.StatusForbidden, "read_only", "this runner-ui does not answer; start it with --allow-answer to answer waiting nodes")
		return
	}
	if !s.ownPage(w, r, "an answer") {
		return
	}
	var req struct {
		ID     string `json:"id"`
		Answer string `json:"answer"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxAnswerBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "the body is {\"id\": NODE, \"answer\": TEXT}: "+err.Error())
		return
	}
	if !tree.ValidID(req.ID) {
		writeError(w, http.StatusBadRequest, "bad_request", "not a node id: "+quoteHost(req.ID))
		return
	}
	bin := s.opts.TreeEdit
	if bin == "" {
		bin = "tree-edit"
	}
	ctx, cancel := context.WithTimeout(r.Context(), answerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-C", s.opts.Root, "answer", req.ID, "--file", "-", "--by", "runner-ui")
	cmd.Stdin = strings.NewReader(req.Answer)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		how := "committed"
		if strings.HasPrefix(stdout.String(), "queued=") {
			how = "queued"
		}
		writeJSON(w, http.StatusOK, map[string]any{"version": 1, "id": req.ID, "answer": how})
	case errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 80):
		writeError(w, http.StatusConflict, "refused", lastLine(stderr.String()))
	default:
		msg := lastLine(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		writeError(w, http.StatusInternalServerError, "answer", "tree-edit answer failed: "+msg)
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
