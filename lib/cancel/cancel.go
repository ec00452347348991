// Package cancel is the one way an operator's tool asks a run to stop
// (DESIGN.md decision 12), and how the runner tells that request
// from a cancel file an agent created to dodge its attempt.
//
// The cancel file .runner/cancel stops the loop, and agent-exec and
// guard-run stop their session when it appears. Any process of the user
// can create it, the agent's included, so the file alone cannot say who
// asked. While a session runs, agent-exec (and guard-run) hold a Judge: a
// unix socket in the abstract namespace, named after the repository. Request
// tells the judge first, then writes the file; the judge asks the kernel
// for the caller's process id (SO_PEERCRED), which no process can forge,
// and counts the request as the operator's only when that process is not
// one of the session's (agent-exec and guard-run are child subreapers:
// every process a session starts, daemons included, stays their
// descendant). A cancel file that appears during the session with no
// operator's request is the session's own: it still stops the loop, but
// the iteration is an agent error (the attempt is consumed), so an agent
// cannot end its session as "interrupted" to keep its attempts.
package cancel

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
)

// Refused is returned by Request when the judge found the caller inside
// the session it judges.
var Refused = errors.New("refused: the request comes from inside the running session (an agent or a guard cannot cancel its own iteration)")

// socketName is the abstract socket of the repository at root.
func socketName(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sum := sha256.Sum256([]byte(abs))
	return "@treeloop-cancel-" + hex.EncodeToString(sum[:12]), nil
}

// Request asks the run in the repository at root to stop, on behalf of by
// (who asks, one line: "runner-cancel", "runner-ui"): the running session's
// judge, if any, is told first, then .runner/cancel is written with by,
// the process id and the time. It returns Refused, writing nothing, when
// called from inside the running session.
func Request(root, by string) error {
	by = strings.Join(strings.Fields(by), " ")
	if by == "" {
		return errors.New("say who requests the cancel")
	}
	if st, err := os.Stat(filepath.Join(root, layout.Runner)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a treeloop repository: no %s directory (run runner-init)", root, layout.Runner)
	}
	name, err := socketName(root)
	if err != nil {
		return err
	}
	if err := tell(name, "cancel "+by); err != nil {
		return err
	}
	line := fmt.Sprintf("by=%s pid=%d at=%s\n", strconv.Quote(by), os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := writeCancel(filepath.Join(root, layout.Cancel), []byte(line)); err != nil {
		return fmt.Errorf("write %s: %w", layout.Cancel, fsutil.Cause(err))
	}
	return nil
}

// writeCancel writes the cancel file in place, durably. Not through a
// temporary file and a rename: a temporary file beside it in .runner/ is
// not ignored by git, and a step staging its iteration at that moment
// would commit it. What stops a run is that the file exists; its line only
// says who asked, and a reader that finds it not yet written loses nothing.
// A symbolic link in its place is replaced, never written through.
func writeCancel(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		if err = os.Remove(path); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		}
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(path))
}

// tell sends one request line to the running session's judge, if one
// listens: Refused when the judge found the caller inside the session.
func tell(name, line string) error {
	c, err := net.DialTimeout("unix", name, 5*time.Second)
	if err != nil {
		return nil // no session runs: nobody to tell
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = fmt.Fprintf(c, "%s\n", line)
	reply := ""
	if err == nil {
		reply, err = bufio.NewReader(c).ReadString('\n')
	}
	switch {
	case err != nil:
		return fmt.Errorf("tell the running session: %w", err)
	case strings.TrimSpace(reply) != "ok":
		return Refused
	}
	return nil
}

// AnnounceAnswer tells the running session's judge, if any, that an
// operator (by) is about to queue an answer file whose bytes have the
// SHA-256 digest (hex) in .runner/answers/ (lib/answer). The judge keeps
// such a file; any other file that appears there during the session is
// the session's own, removed at Close (Verdict.ForgedAnswers). It returns
// Refused from inside the session.
func AnnounceAnswer(root, digest, by string) error {
	by = strings.Join(strings.Fields(by), " ")
	if by == "" || len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return errors.New("an answer is announced with its SHA-256 digest and who queues it")
	}
	name, err := socketName(root)
	if err != nil {
		return err
	}
	return tell(name, "answer "+digest+" "+by)
}

// ctimeMargin is how far before its start a session's judging reaches
// back in file change times.
const ctimeMargin = 50 * time.Millisecond

// Judge listens for operators' requests while one session runs.
type Judge struct {
	path    string
	answers string    // the queued answers' directory
	since   time.Time // when the session's judging began
	before  bool
	self    int // the process whose descendants are the session's
	ln      net.Listener
	mu      sync.Mutex
	byOp    []string        // operators' requests: "<by> (pid N)"
	refused []string        // requests from inside the session
	digests map[string]bool // answers operators announced, by digest
	done    chan struct{}
}

// Who created the cancel file during a session (Verdict.By).
const (
	ByOperator = "operator" // an operator's Request came during the session
	BySession  = "session"  // the file appeared with no operator's request
)

// Verdict is what happened to the cancel file during the session.
type Verdict struct {
	// Appeared: .runner/cancel did not exist when the session started and
	// exists now.
	Appeared bool `json:"appeared"`
	// By is "operator" when an operator's request came during the session,
	// "session" when the file appeared without one, "" when it did not
	// appear.
	By string `json:"by,omitempty"`
	// Requests are the operators' requests received ("<by> (pid N)") and
	// the refused ones from inside the session ("refused: <by> (pid N)").
	Requests []string `json:"requests,omitempty"`
	// ForgedAnswers are the files of .runner/answers/ that appeared or
	// changed during the session with no operator's announcement: the
	// session's own answers to its questions, removed.
	ForgedAnswers []string `json:"forged_answers,omitempty"`
}

// Listen starts judging for the repository at root; the session's
// processes are this process's descendants. Close it when the session
// ends. A second judge for the same repository fails (one runner per
// repository).
func Listen(root string) (*Judge, error) { return listen(root, os.Getpid()) }

// listen is Listen for a session of self's descendants.
func listen(root string, self int) (*Judge, error) {
	name, err := socketName(root)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", name)
	if err != nil {
		return nil, fmt.Errorf("listen for cancel requests: %w", err)
	}
	// The change times of files come from the kernel's coarse clock, a
	// few milliseconds behind time.Now: a margin keeps a file the
	// session writes at once from dating from before it.
	j := &Judge{path: filepath.Join(root, layout.Cancel), answers: filepath.Join(root, layout.Answers), since: time.Now().Add(-ctimeMargin),
		self: self, ln: ln, digests: map[string]bool{}, done: make(chan struct{})}
	_, err = os.Lstat(j.path)
	j.before = err == nil
	go j.serve()
	return j, nil
}

func (j *Judge) serve() {
	defer close(j.done)
	for {
		c, err := j.ln.Accept()
		if err != nil {
			return
		}
		j.handle(c.(*net.UnixConn))
	}
}

func (j *Judge) handle(c *net.UnixConn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	pid := peerPID(c)
	line, _ := bufio.NewReader(io.LimitReader(c, 512)).ReadString('\n')
	kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	digest := ""
	if kind == "answer" {
		digest, rest, _ = strings.Cut(rest, " ")
	}
	by := fmt.Sprintf("%s (pid %d)", rest, pid)
	if kind == "answer" {
		by = "answer queued by " + by
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if inSession(pid, j.self) || (kind != "cancel" && kind != "answer") {
		j.refused = append(j.refused, "refused: "+by)
		fmt.Fprintln(c, "refused")
		return
	}
	if kind == "answer" {
		j.digests[digest] = true
	}
	j.byOp = append(j.byOp, by)
	fmt.Fprintln(c, "ok")
}

// Close stops listening and returns the verdict; seen says the caller saw
// the file created during the session (it may be gone again).
func (j *Judge) Close(seen bool) Verdict {
	j.ln.Close()
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	v := Verdict{Requests: append(append([]string{}, j.byOp...), j.refused...)}
	_, err := os.Lstat(j.path)
	v.Appeared = !j.before && (err == nil || seen)
	switch {
	case !v.Appeared:
	case len(j.cancels()) > 0:
		v.By = ByOperator
	default:
		v.By = BySession
	}
	v.ForgedAnswers = DropAnswers(j.answers, j.since, j.digests)
	return v
}

// cancels are the operators' cancel requests among byOp.
func (j *Judge) cancels() []string {
	var out []string
	for _, r := range j.byOp {
		if !strings.HasPrefix(r, "answer queued by ") {
			out = append(out, r)
		}
	}
	return out
}

// DropAnswers removes from dir (.runner/answers) every entry that
// appeared or changed since since (its change time, which no write can
// keep from moving) whose bytes are not one of the announced digests, and
// returns their names, sorted: answers a session wrote to its own
// questions. With no digests it drops every entry changed since since (a
// session that ended without its judge: agent-exec --restore).
func DropAnswers(dir string, since time.Time, digests map[string]bool) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var dropped []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue // a file being written, never read as an answer (lib/answer)
		}
		p := filepath.Join(dir, e.Name())
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			continue
		}
		if !time.Unix(st.Ctim.Unix()).Before(since) && !announced(p, st, digests) {
			if os.RemoveAll(p) == nil {
				dropped = append(dropped, e.Name())
			}
		}
	}
	return dropped
}

// announced reports whether the regular file p (st) holds bytes whose
// digest an operator announced.
func announced(p string, st syscall.Stat_t, digests map[string]bool) bool {
	if len(digests) == 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > 1<<20 {
		return false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(data)
	return digests[hex.EncodeToString(sum[:])]
}

// peerPID is the process id of the socket's peer, from the kernel.
func peerPID(c *net.UnixConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// inSession reports whether the peer pid is one of the session's processes
// (self or its descendants); an unknown peer (pid 0) is taken as one, and
// so is one in another PID namespace than this process (a container's: a
// session under [sandbox] mode = "docker" does not descend from agent-exec,
// and with the host's network it reaches this socket).
func inSession(pid, self int) bool {
	return pid <= 0 || descends(pid, self) || !samePIDNamespace(pid)
}

// samePIDNamespace reports whether pid is in this process's PID namespace:
// false when it is in another, or when its namespace may not be read (a
// process of another user, such as a rootful container's); true when the
// process is gone (nothing of it is left to tell).
func samePIDNamespace(pid int) bool {
	own, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return false
	}
	theirs, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && theirs == own
}

// descends reports whether pid is ancestor or one of its descendants, by
// the parent links in /proc.
func descends(pid, ancestor int) bool {
	for i := 0; i < 4096 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(stat)
		var state string
		if _, err := fmt.Sscan(s[strings.LastIndexByte(s, ')')+1:], &state, &pid); err != nil {
			return false
		}
	}
	return pid == ancestor
}

// Pending is a cancel request that stands: .runner/cancel exists and the
// run stops before its next iteration.
type Pending struct {
	By  string    `json:"by"`  // who asked; "" when the file does not say (a bare touch)
	PID int       `json:"pid"` // the asking process; 0 when the file does not say
	At  time.Time `json:"at"`  // when it was asked: the file's time, else its mtime
}

// Read is the cancel request pending in the repository at root, nil when
// there is none (Parse says what the file tells).
func Read(root string) (*Pending, error) {
	path := filepath.Join(root, layout.Cancel)
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var data []byte
	if st.Mode().IsRegular() { // a directory, a FIFO or a symlink still stops the loop: not read
		data, _ = fsutil.ReadFile(path, "", 4096)
	}
	return Parse(data, st.ModTime()), nil
}

// Parse reads a cancel file's content written at mtime: Request's line
// ("by=… pid=… at=…"); any other content (touch, echo) is a request by an
// unknown hand at mtime.
func Parse(data []byte, mtime time.Time) *Pending {
	p := &Pending{At: mtime.UTC().Truncate(time.Second)}
	line, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(line, "by=")
	if !ok {
		return p
	}
	by, rest, ok := strings.Cut(rest, " pid=")
	if !ok {
		return p
	}
	if s, err := strconv.Unquote(by); err == nil {
		p.By = s
	}
	pid, at, _ := strings.Cut(rest, " at=")
	p.PID, _ = strconv.Atoi(pid)
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(at)); err == nil {
		p.At = t.UTC()
	}
	return p
}

// Clear withdraws the pending cancel request of the repository at root:
// .runner/cancel is removed. It reports whether there was one.
func Clear(root string) (bool, error) {
	err := os.Remove(filepath.Join(root, layout.Cancel))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("remove %s: %w", layout.Cancel, err)
}

// Said is what the cancel file of the repository at root says of the
// request: " (<its first line>)" in printable characters, at most 200 of
// them, as Request wrote it ("by=… pid=… at=…"); "" when it says nothing.
func Said(root string) string {
	data, _ := fsutil.ReadFile(filepath.Join(root, layout.Cancel), "", 4096)
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, line)
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200])
	}
	if line == "" {
		return ""
	}
	return " (" + line + ")"
}

// Stopped uses up the cancel request of the repository at root that
// stopped runner (runner-step, runner-loop) and says so on w in one line:
// the next run goes on, or the request stays pending and why; nothing
// when no request is pending (withdrawn meanwhile).
func Stopped(root, runner string, w io.Writer) {
	said := Said(root)
	p, err := UseUp(root)
	switch {
	case err != nil:
		fmt.Fprintf(w, "%s: the cancel request%s stopped it but stays pending: %v: remove %s\n", runner, said, fsutil.Cause(err), layout.Cancel)
	case p != nil:
		fmt.Fprintf(w, "%s: stopped by the cancel request%s, now used up: the next %s runs\n", runner, said, runner)
	}
}

// UseUp removes the cancel request of the repository at root once it has
// stopped a runner (runner-loop, or runner-step run alone): a request
// stops the runner that finds it and is then used up, so the next runner
// runs. It returns the request it removed, nil when there was none; on an
// error the request stays pending.
func UseUp(root string) (*Pending, error) {
	p, err := Read(root)
	if err != nil || p == nil {
		return nil, err
	}
	if _, err := Clear(root); err != nil {
		return nil, err
	}
	return p, nil
}
