package cancel

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
)

// repo is a directory with a .runner directory, as runner-init leaves it.
func repo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, layout.Runner), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// outsider starts a process that is not this test's ancestor, nor (to the
// judge given its pid as the session) this test's: requests from the test
// then come from outside that session, as an operator's do.
func outsider(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func cancelFile(root string) string { return filepath.Join(root, layout.Cancel) }

// TestRequestWithoutJudge: with no session running, Request writes the
// cancel file: who asked (one line, quoted), the process id and the time.
func TestRequestWithoutJudge(t *testing.T) {
	root := repo(t)
	if err := Request(root, "  runner-cancel\n by  hand "); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cancelFile(root))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(fmt.Sprintf(`^by="runner-cancel by hand" pid=%d at=20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`, os.Getpid()))
	if !want.Match(data) {
		t.Fatalf("cancel file %q does not match %s", data, want)
	}
}

func TestRequestRefusesBadInput(t *testing.T) {
	root := repo(t)
	if err := Request(root, " \n\t"); err == nil || !strings.Contains(err.Error(), "say who") {
		t.Errorf("Request with nobody asking: %v", err)
	}
	bare := t.TempDir()
	if err := Request(bare, "runner-cancel"); err == nil || !strings.Contains(err.Error(), "run runner-init") {
		t.Errorf("Request outside a treeloop repository: %v", err)
	}
	if err := os.WriteFile(filepath.Join(bare, layout.Runner), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Request(bare, "runner-cancel"); err == nil || !strings.Contains(err.Error(), "not a treeloop repository") {
		t.Errorf("Request with .runner a file: %v", err)
	}
	for _, dir := range []string{root, bare} {
		if _, err := os.Lstat(cancelFile(dir)); err == nil {
			t.Errorf("%s: a refused request wrote the cancel file", dir)
		}
	}
}

// TestSocketName: one name per repository, the same through a symlink.
func TestSocketName(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	na, _ := socketName(a)
	nb, _ := socketName(b)
	nl, _ := socketName(link)
	if !regexp.MustCompile(`^@treeloop-cancel-[0-9a-f]{24}$`).MatchString(na) {
		t.Errorf("socket name %q", na)
	}
	if na == nb {
		t.Errorf("two repositories share the socket %s", na)
	}
	if nl != na {
		t.Errorf("through a symlink: %s, directly: %s", nl, na)
	}
	// A path that does not resolve keeps its absolute form.
	gone := filepath.Join(a, "missing")
	ng, _ := socketName(gone)
	if ng == na || ng == nb {
		t.Errorf("a missing path shares a socket: %s", ng)
	}
}

// fakeJudge answers every request on root's socket with reply (no reply
// when reply is ""), counting the lines it read.
func fakeJudge(t *testing.T, root, reply string) chan string {
	t.Helper()
	name, err := socketName(root)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	lines := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			lines <- line
			if reply != "" {
				fmt.Fprint(c, reply)
			}
			c.Close()
		}
	}()
	return lines
}

// TestRequestTellsTheJudgeFirst: the judge reads who asks; only its "ok"
// lets the file be written, anything else is Refused, and a judge that
// hangs up is an error. Neither writes the file.
func TestRequestTellsTheJudgeFirst(t *testing.T) {
	for _, c := range []struct {
		reply   string
		refused bool
		err     string
	}{
		{reply: "ok\n"},
		{reply: " ok \n"},
		{reply: "refused\n", refused: true},
		{reply: "okay\n", refused: true},
		{reply: "", err: "tell the running session"},
	} {
		root := repo(t)
		lines := fakeJudge(t, root, c.reply)
		err := Request(root, "runner-ui")
		if got := <-lines; got != "cancel runner-ui\n" {
			t.Errorf("reply %q: the judge read %q", c.reply, got)
		}
		_, statErr := os.Lstat(cancelFile(root))
		switch {
		case c.refused:
			if !errors.Is(err, Refused) || statErr == nil {
				t.Errorf("reply %q: %v, file written %v", c.reply, err, statErr == nil)
			}
		case c.err != "":
			if err == nil || errors.Is(err, Refused) || !strings.Contains(err.Error(), c.err) || statErr == nil {
				t.Errorf("reply %q: %v, file written %v", c.reply, err, statErr == nil)
			}
		default:
			if err != nil || statErr != nil {
				t.Errorf("reply %q: %v, file written %v", c.reply, err, statErr == nil)
			}
		}
	}
}

// TestVerdicts: every verdict Close gives, by what happened to the cancel
// file during the session and who asked.
func TestVerdicts(t *testing.T) {
	me := fmt.Sprintf("(pid %d)", os.Getpid())
	for _, c := range []struct {
		name     string
		before   bool // the file exists when the session starts
		operator bool // the test's requests come from outside the session
		requests []string
		write    bool // the session writes the file itself
		remove   bool // the file is gone again at Close
		seen     bool
		want     Verdict
	}{
		{name: "nothing", want: Verdict{}},
		{name: "before", before: true, want: Verdict{}},
		{name: "before, seen", before: true, seen: true, want: Verdict{}},
		{name: "before, the session rewrites it", before: true, write: true, want: Verdict{}},
		{name: "session", write: true, want: Verdict{Appeared: true, By: BySession}},
		{name: "session, gone again, seen", write: true, remove: true, seen: true, want: Verdict{Appeared: true, By: BySession}},
		{name: "session, gone again, unseen", write: true, remove: true, want: Verdict{}},
		{name: "seen only", seen: true, want: Verdict{Appeared: true, By: BySession}},
		{name: "operator", operator: true, requests: []string{"runner-cancel"},
			want: Verdict{Appeared: true, By: ByOperator, Requests: []string{"runner-cancel " + me}}},
		{name: "operator twice", operator: true, requests: []string{"runner-cancel", "runner-ui"},
			want: Verdict{Appeared: true, By: ByOperator, Requests: []string{"runner-cancel " + me, "runner-ui " + me}}},
		{name: "operator, file gone again, seen", operator: true, requests: []string{"runner-ui"}, remove: true, seen: true,
			want: Verdict{Appeared: true, By: ByOperator, Requests: []string{"runner-ui " + me}}},
		{name: "operator before", before: true, operator: true, requests: []string{"runner-cancel"},
			want: Verdict{Requests: []string{"runner-cancel " + me}}},
		{name: "refused", requests: []string{"agent"},
			want: Verdict{Requests: []string{"refused: agent " + me}}},
		{name: "refused, then the session writes", requests: []string{"agent"}, write: true,
			want: Verdict{Appeared: true, By: BySession, Requests: []string{"refused: agent " + me}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			if c.before {
				if err := os.WriteFile(cancelFile(root), []byte("by=\"x\"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			self := os.Getpid()
			if c.operator {
				self = outsider(t)
			}
			j, err := listen(root, self)
			if err != nil {
				t.Fatal(err)
			}
			for _, by := range c.requests {
				err := Request(root, by)
				if c.operator != (err == nil) || !c.operator && !errors.Is(err, Refused) {
					t.Fatalf("Request(%s): %v", by, err)
				}
			}
			if c.write {
				if err := os.WriteFile(cancelFile(root), []byte("agent\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.remove {
				if err := os.Remove(cancelFile(root)); err != nil {
					t.Fatal(err)
				}
			}
			got := j.Close(c.seen)
			if got.Appeared != c.want.Appeared || got.By != c.want.By || !slices.Equal(got.Requests, c.want.Requests) {
				t.Fatalf("verdict %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestRefusedWritesNothing: a request from inside the session is refused
// and leaves no cancel file.
func TestRefusedWritesNothing(t *testing.T) {
	root := repo(t)
	j, err := Listen(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Request(root, "agent"); !errors.Is(err, Refused) {
		t.Fatalf("Request from inside the session: %v", err)
	}
	if _, err := os.Lstat(cancelFile(root)); err == nil {
		t.Fatal("a refused request wrote the cancel file")
	}
	if v := j.Close(false); v.Appeared || v.By != "" || len(v.Requests) != 1 {
		t.Fatalf("verdict %+v", v)
	}
}

// TestOneJudgePerRepository: a second judge for the same repository fails
// while the first listens, and succeeds once it is closed.
func TestOneJudgePerRepository(t *testing.T) {
	root := repo(t)
	j, err := Listen(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(root); err == nil || !strings.Contains(err.Error(), "listen for cancel requests") {
		t.Fatalf("second judge: %v", err)
	}
	j.Close(false)
	j2, err := Listen(root)
	if err != nil {
		t.Fatalf("judge after the first closed: %v", err)
	}
	j2.Close(false)
}

// TestLongRequest: the judge reads at most 512 bytes of a request
// ("cancel " and who asks).
func TestLongRequest(t *testing.T) {
	root := repo(t)
	j, err := listen(root, outsider(t))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := socketName(root)
	c, err := net.Dial("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "cancel %s\n", strings.Repeat("a", 600))
	reply, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	v := j.Close(false)
	if reply != "ok\n" || len(v.Requests) != 1 {
		t.Fatalf("reply %q, requests %q", reply, v.Requests)
	}
	if by, _, _ := strings.Cut(v.Requests[0], " (pid"); by != strings.Repeat("a", 512-len("cancel ")) {
		t.Fatalf("the judge kept %d bytes of the request, want 505", len(by))
	}
}

// TestInSession: the session is self and its descendants, at any depth;
// its parent, other processes, and pids that do not exist are not; a peer
// the kernel did not name (pid 0) is taken as the session's.
func TestInSession(t *testing.T) {
	self := os.Getpid()
	// A grandchild whose name holds spaces and parentheses, which /proc's
	// stat line does not quote.
	dir := t.TempDir()
	odd := filepath.Join(dir, "a) b (c")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", `"$0" 600 & echo $!; wait`, odd)
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	var grandchild int
	if _, err := fmt.Fscan(out, &grandchild); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscallKill(grandchild); sh.Wait() })
	other := outsider(t)
	for _, c := range []struct {
		name      string
		pid, self int
		want      bool
	}{
		{"self", self, self, true},
		{"child", sh.Process.Pid, self, true},
		{"grandchild", grandchild, self, true},
		{"grandchild of the child", grandchild, sh.Process.Pid, true},
		{"parent", os.Getppid(), self, false},
		{"sibling", other, sh.Process.Pid, false},
		{"self, judged for a child", self, sh.Process.Pid, false},
		{"no such process", 1 << 22, self, false},
		{"unknown peer", 0, self, true},
		{"negative", -1, self, true},
	} {
		if got := inSession(c.pid, c.self); got != c.want {
			t.Errorf("%s: inSession(%d, %d) = %v, want %v", c.name, c.pid, c.self, got, c.want)
		}
	}
	if !descends(1, 1) {
		t.Error("descends(1, 1): pid 1 is itself")
	}
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// Files of the answer queue changed since the session began are dropped
// unless an operator announced their bytes; files from before it, and
// files being written (a dot name), stay.
func TestDropAnswers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"forged.json", "announced.json", ".temp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256([]byte("announced.json"))
	announced := map[string]bool{hex.EncodeToString(sum[:]): true}
	// A session that began after the files were written drops none.
	if got := DropAnswers(dir, time.Now().Add(time.Hour), announced); len(got) != 0 {
		t.Errorf("dropped files from before the session: %q", got)
	}
	// One that began before: the unannounced file is the session's.
	if got := DropAnswers(dir, time.Now().Add(-time.Hour), announced); !slices.Equal(got, []string{"forged.json"}) {
		t.Errorf("dropped %q, want [forged.json]", got)
	}
	// With nothing announced (a session that ended without its judge),
	// every file changed since is dropped.
	if got := DropAnswers(dir, time.Now().Add(-time.Hour), nil); !slices.Equal(got, []string{"announced.json"}) {
		t.Errorf("without a judge dropped %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".temp")); err != nil {
		t.Errorf("a file being written was removed: %v", err)
	}
}

// TestOtherPIDNamespace: a process in a PID namespace of its own, as a
// container's session is (it descends from no agent-exec), is taken as
// the session's; this process and a gone one are not.
func TestOtherPIDNamespace(t *testing.T) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatalf("bwrap is required: %v", err)
	}
	cmd := exec.Command(bw, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "sh", "-c", "echo ready; exec sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("the namespaced process did not start: %v", err)
	}
	// bwrap's child is the new namespace's init, which outlives the
	// shell's echo; it is in bwrap's namespace, not ours.
	kids := childPIDs(t, cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("bwrap has no child")
	}
	inner := kids[0]
	if samePIDNamespace(inner) {
		t.Errorf("pid %d in bwrap's PID namespace reads as ours", inner)
	}
	if !inSession(inner, os.Getpid()+1<<20) {
		t.Errorf("pid %d in another PID namespace is not taken as a session's", inner)
	}
	if !samePIDNamespace(os.Getpid()) || !samePIDNamespace(1<<22) {
		t.Error("this process, or a gone one, reads as in another namespace")
	}
}

// childPIDs are pid's children, from /proc.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	var out []int
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, task := range tasks {
		data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
