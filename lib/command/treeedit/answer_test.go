package treeedit

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/answer"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// waiting commits the start tree with "tried" and "stuck" waiting on a
// question each, and the answers' queue ignored as runner-init ignores it.
func waiting(t *testing.T) string {
	t.Helper()
	root := repo(t)
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/.runner/lock\n/.runner/answers/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commitTree(t, root, func(n *tree.Node) {
		node(t, n, "tried").Waiting = "Which store?"
		node(t, n, "stuck").Waiting = "Which port?"
	})
	return root
}

// holdLock holds .runner/lock as a runner would, until the test ends.
func holdLock(t *testing.T, root string) {
	t.Helper()
	p := filepath.Join(root, layout.Lock)
	if err := os.WriteFile(p, []byte("pid=1 command=runner-loop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
}

// runStdin is run with stdin.
func runStdin(t *testing.T, root, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	gittest.Setenv(t, root)
	var out, errb bytes.Buffer
	code = Main(append([]string{"-C", root}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// answered is the start tree of waiting with tried answered as text.
func answered(t *testing.T, text string) *tree.Node {
	want := start()
	node(t, want, "stuck").Waiting = "Which port?"
	node(t, want, "tried").Answers = []tree.Answer{{Question: "Which store?", Answer: text}}
	return want
}

// TestAnswer: the answer, from TEXT, a file or standard input, trimmed,
// goes with the question to the node's answers and the node waits no
// more; the commit body gives both.
func TestAnswer(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"text", []string{"answer", "tried", "  Postgres\n"}, ""},
		{"file", []string{"answer", "tried", "--file", "a.txt"}, ""},
		{"stdin", []string{"answer", "tried", "--file", "-"}, "Postgres\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := waiting(t)
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("Postgres\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runStdin(t, root, c.stdin, c.args...)
			msg := "chore(loop): operator answer node tried"
			if code != 0 || stderr != "" || stdout != "commit="+gittest.Run(t, root, "rev-parse", "HEAD")+" "+msg+"\n" {
				t.Fatalf("exit %d, %q %q", code, stdout, stderr)
			}
			if got, want := load(t, root), answered(t, "Postgres"); !tree.Equal(got, want) {
				t.Fatalf("tree:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
			}
			if got, want := gittest.Run(t, root, "log", "-1", "--format=%B"), msg+"\n\nquestion: \"Which store?\"\nanswer: \"Postgres\""; got != want {
				t.Errorf("commit message:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestAnswerRefusals: each refusal with its code and one line, nothing
// written, committed or queued.
func TestAnswerRefusals(t *testing.T) {
	full := func(t *testing.T, root string) {
		commitTree(t, root, func(n *tree.Node) {
			w := node(t, n, "tried")
			for i := 0; i < tree.MaxAnswers; i++ {
				w.Answers = append(w.Answers, tree.Answer{Question: "Q?", Answer: "A"})
			}
		})
	}
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, root string)
		args    []string
		code    int
		stderr  string
	}{
		{"not waiting", nil, []string{"answer", "split", "x"}, 1, "node split does not wait for an answer (runner-status lists the questions)"},
		{"no node", nil, []string{"answer", "nosuch", "x"}, 1, "no node nosuch in .runner/state/tree.json"},
		{"bad id", nil, []string{"answer", "a b", "x"}, 80, `"a b" is not a node id`},
		{"both", nil, []string{"answer", "tried", "x", "--file", "a.txt"}, 80, "answer: give the answer as TEXT or with --file FILE, one of them"},
		{"neither", nil, []string{"answer", "tried"}, 80, "answer: give the answer as TEXT or with --file FILE, one of them"},
		{"empty", nil, []string{"answer", "tried", " \n"}, 80, "the answer is empty"},
		{"no file", nil, []string{"answer", "tried", "--file", "nosuch.txt"}, 80, ""},
		{"too many", full, []string{"answer", "tried", "x"}, 1, "node tried has " + strconv.Itoa(tree.MaxAnswers) + " answers, the most a node keeps"},
		{"queued, not waiting", holdLock, []string{"answer", "split", "x"}, 1, "node split does not wait for an answer (runner-status lists the questions)"},
		{"queued, no node", holdLock, []string{"answer", "nosuch", "x"}, 1, "no node nosuch in .runner/state/tree.json"},
		{"queued, not ignored", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/.runner/lock\n"), 0o644)
			holdLock(t, root)
		}, []string{"answer", "tried", "x"}, 6, "queue the answer: .runner/answers/ is not ignored by git: add the line answers/ to .runner/.gitignore (runner-init writes it), then answer again"},
		{"queued, invalid tree", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, layout.Tree), []byte(`{"id": "root"}`), 0o644)
			gittest.Run(t, root, "commit", "-q", "-am", "broken")
			holdLock(t, root)
		}, []string{"answer", "tried", "x"}, 1, ""},
		{"queued, not a repository", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".git"))
			holdLock(t, root)
		}, []string{"answer", "tried", "x"}, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := waiting(t)
			if c.prepare != nil {
				c.prepare(t, root)
			}
			data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			code, stdout, stderr := run(t, root, c.args...)
			if code != c.code || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tree-edit: ") || c.stderr != "" && stderr != "tree-edit: "+c.stderr+"\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q", code, stdout, stderr, c.code, c.stderr)
			}
			if after, _ := os.ReadFile(filepath.Join(root, layout.Tree)); !bytes.Equal(after, data) {
				t.Error("a refused answer changed tree.json")
			}
			if _, err := os.Stat(filepath.Join(root, layout.Answers)); err == nil {
				t.Error("a refused answer was queued")
			}
			if _, err := os.Stat(filepath.Join(root, ".git")); err == nil && gittest.Run(t, root, "log", "-1", "--format=%s") == "chore(loop): operator answer node tried" {
				t.Error("a refused answer committed")
			}
		})
	}
}

// TestAnswerQueued: while a runner holds the lock the answer is queued
// for it, the tree untouched; apply-answers, run by the runner, commits
// each queued answer as its own edit, oldest first, drops an answer to a
// question its node no longer asks and removes what is not an answer.
func TestAnswerQueued(t *testing.T) {
	root := waiting(t)
	head := gittest.Run(t, root, "rev-parse", "HEAD")
	data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
	holdLock(t, root)
	code, stdout, stderr := run(t, root, "answer", "tried", "Postgres", "--by", "runner-ui")
	if code != 0 || !regexp.MustCompile(`^queued=\.runner/answers/[0-9T.]+Z-tried\.json node=tried\n$`).MatchString(stdout) ||
		stderr != "tree-edit: warning: a runner works in this repository: the answer is queued and committed before its next iteration\n" {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(root, layout.Tree)); !bytes.Equal(after, data) || gittest.Run(t, root, "rev-parse", "HEAD") != head {
		t.Fatal("a queued answer changed the tree")
	}
	qs, bad := answer.Pending(root)
	if len(qs) != 1 || len(bad) != 0 || qs[0].NodeID != "tried" || qs[0].Question != "Which store?" || qs[0].Answer != "Postgres" || qs[0].By != "runner-ui" ||
		"queued="+layout.Answers+"/"+qs[0].File+" node=tried\n" != stdout {
		t.Fatalf("queued %+v, bad %v", qs, bad)
	}
	// apply-answers is refused while another runner holds the lock.
	if code, stdout, stderr := run(t, root, "apply-answers"); code != 1 || stdout != "" || !strings.Contains(stderr, "a runner holds .runner/lock") {
		t.Fatalf("apply-answers under another's lock: exit %d, %q %q", code, stdout, stderr)
	}
}

// TestApplyAnswers: the queued answers are committed oldest first, each
// as its own edit; one to a question its node no longer asks is dropped
// with a warning, and a file that is not a queued answer is removed.
func TestApplyAnswers(t *testing.T) {
	root := waiting(t)
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i, q := range []answer.Queued{
		{NodeID: "stuck", Question: "Which port?", Answer: "8080", By: "op"},
		{NodeID: "tried", Question: "Which cache?", Answer: "none", By: "op"},
		{NodeID: "tried", Question: "Which store?", Answer: "Postgres", By: "op"},
	} {
		if _, err := answer.Queue(root, q, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, layout.Answers, "junk.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := gittest.Run(t, root, "rev-parse", "HEAD")
	code, stdout, stderr := run(t, root, "apply-answers")
	if code != 0 {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	if got := gittest.Run(t, root, "log", "--format=%s", before+"..HEAD"); got != "chore(loop): operator answer node tried\nchore(loop): operator answer node stuck" {
		t.Fatalf("commits:\n%s", got)
	}
	if !regexp.MustCompile(`^commit=[0-9a-f]{40} chore\(loop\): operator answer node stuck\ncommit=[0-9a-f]{40} chore\(loop\): operator answer node tried\n$`).MatchString(stdout) {
		t.Errorf("stdout %q", stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "tree-edit: warning: .runner/answers/junk.json: not a queued answer (") ||
		lines[1] != "tree-edit: warning: the answer queued by op at 2026-11-28T12:00:01Z for node tried is dropped: node tried now asks another question than the one answered" {
		t.Errorf("stderr:\n%s", stderr)
	}
	want := answered(t, "Postgres")
	s := node(t, want, "stuck")
	s.Waiting, s.Answers = "", []tree.Answer{{Question: "Which port?", Answer: "8080"}}
	if got := load(t, root); !tree.Equal(got, want) {
		t.Fatalf("tree:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
	}
	if ents, err := os.ReadDir(filepath.Join(root, layout.Answers)); err != nil || len(ents) != 0 {
		t.Errorf("the queue holds %v (%v)", ents, err)
	}
	// Nothing queued: nothing to do.
	if code, stdout, stderr := run(t, root, "apply-answers"); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("an empty queue: exit %d, %q %q", code, stdout, stderr)
	}
}
