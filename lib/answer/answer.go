// Package answer is the operator's answer to a node that waits (DESIGN.md
// decision 3): the answer's text, and the queue that holds an answer while
// a runner works. An answer given while no runner holds .runner/lock is
// committed at once (tree-edit answer); one given while a runner works is
// queued in .runner/answers/ (schemas/queued_answer.v1.schema.json), after
// the running session's judge was told of it (lib/cancel: a session cannot
// answer its own question), and the runner commits it between iterations
// (tree-edit apply-answers).
package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// MaxRunes is the longest answer, in code points (the schema's bound on a
// node's answers).
const MaxRunes = 16384

// maxFile bounds a queued answer file.
const maxFile = 256 << 10

// Text checks an answer and returns it trimmed: not empty, at most
// MaxRunes code points, valid UTF-8.
func Text(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", errors.New("the answer is empty")
	case !utf8.ValidString(s):
		return "", errors.New("the answer is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxRunes:
		return "", fmt.Errorf("the answer is %d characters, more than the %d allowed", utf8.RuneCountInString(s), MaxRunes)
	}
	return s, nil
}

// Queued is one queued answer file (schemas/queued_answer.v1.schema.json).
type Queued struct {
	Version  int    `json:"version"`
	NodeID   string `json:"node_id"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	By       string `json:"by"`
	At       string `json:"at"`
	// File is the file's name in .runner/answers/ (not part of the file).
	File string `json:"-"`
}

// Parse decodes and validates a queued answer file by the schema's plain
// check (check_gen.go, generated from schemas/queued_answer.v1.schema.json;
// TestParseAgreesWithSchema holds it to the full validator), so that the
// commands reading the queue need not link the full validator. Its at is
// also an RFC 3339 time.
//
//go:generate go run ../schema/internal/schemagen -schema queued_answer.v1 -check check -o check_gen.go
func Parse(data []byte) (Queued, error) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return Queued{}, err
	}
	if why := check(v); why != "" {
		return Queued{}, errors.New(why)
	}
	m := v.(map[string]any)
	q := Queued{Version: 1, NodeID: m["node_id"].(string), Question: m["question"].(string),
		Answer: m["answer"].(string), By: m["by"].(string), At: m["at"].(string)}
	if _, err := time.Parse(time.RFC3339, q.At); err != nil {
		return Queued{}, errors.New("/at: not an RFC 3339 time")
	}
	return q, nil
}

// encode is q's file bytes.
func encode(q Queued) []byte {
	q.Version = 1
	data, _ := jsondoc.Marshal(q) // a Queued always encodes
	return data
}

// Queue writes q into root's queue (.runner/answers/), named after the
// time it was queued and the node, after telling the running session's
// judge of its bytes; it returns the file's path relative to root. From
// inside a session it is refused (cancel.Refused) and writes nothing. The
// queue must be ignored by git (runner-init's .runner/.gitignore lists
// answers/), or the answer would be committed with an iteration.
func Queue(root string, q Queued, now time.Time) (string, error) {
	repo, err := git.Open(root)
	if err != nil {
		return "", err
	}
	rel := layout.Answers + "/x.json"
	if _, err := repo.Run("check-ignore", "-q", "--no-index", rel); err != nil {
		return "", fmt.Errorf("%s/ is not ignored by git: add the line answers/ to %s (runner-init writes it), then answer again", layout.Answers, layout.Gitignore)
	}
	q.At = now.UTC().Format(time.RFC3339)
	data := encode(q)
	sum := sha256.Sum256(data)
	if err := cancel.AnnounceAnswer(root, hex.EncodeToString(sum[:]), q.By); err != nil {
		return "", err
	}
	name := now.UTC().Format("20060102T150405.000000000Z") + "-" + q.NodeID + ".json"
	dir := filepath.Join(root, layout.Answers)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fsutil.Cause(err)
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, name), data, 0o644); err != nil {
		return "", fsutil.Cause(err)
	}
	return layout.Answers + "/" + name, nil
}

// Bad is a file of the queue that is not a queued answer.
type Bad struct {
	File string
	Err  error
}

// Pending lists the queued answers of root, oldest first (by file name),
// and the files that are not queued answers (left where they are).
func Pending(root string) ([]Queued, []Bad) {
	dir := filepath.Join(root, layout.Answers)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // no queue: nothing queued
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") { // a file being written (fsutil.WriteAtomic)
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []Queued
	var bad []Bad
	for _, name := range names {
		data, err := fsutil.ReadFile(filepath.Join(dir, name), "", maxFile)
		if err == nil {
			var q Queued
			if q, err = Parse(data); err == nil {
				q.File = name
				out = append(out, q)
				continue
			}
		}
		bad = append(bad, Bad{File: name, Err: fsutil.Cause(err)})
	}
	return out, bad
}

// Remove removes a queued answer's file once it is committed or dropped.
func Remove(root string, q Queued) error {
	err := os.RemoveAll(filepath.Join(root, layout.Answers, q.File))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Open is a question a node waits on, for the status views and the
// pull-request body.
type Open struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Title    string `json:"title"`
	Question string `json:"question"`
}

// Questions lists the open questions of the tree: the leaves that wait for
// an answer, in selection order.
func Questions(root *tree.Node) []Open {
	out := []Open{}
	for _, e := range tree.Waiting(root) {
		out = append(out, Open{ID: e.Node.ID, Path: e.Path, Title: e.Node.Title, Question: e.Node.Waiting})
	}
	return out
}

// Markdown lists the open questions for a pull-request body ("" when
// there are none): one list item per node, its title and id, its question
// quoted below it.
func Markdown(qs []Open) string {
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "- %s (`%s`) waits for an answer (`tree-edit answer %s TEXT`):\n\n", strings.TrimSpace(strings.ReplaceAll(q.Title, "\n", " ")), q.ID, q.ID)
		for _, l := range strings.Split(strings.TrimSpace(q.Question), "\n") {
			b.WriteString(strings.TrimRight("  > "+l, " ") + "\n")
		}
	}
	return b.String()
}
