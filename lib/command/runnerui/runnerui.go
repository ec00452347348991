// Package runnerui is the runner-ui command: the read-only web UI of a
// repository's run (seed 000 §14, seed 004, DESIGN.md decision 17), served
// by lib/ui until SIGINT or SIGTERM.
package runnerui

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/ui"
)

// Options is the command line of runner-ui.
type Options struct {
	cli.Chdir
	Listen      string `name:"listen" default:"127.0.0.1:0" placeholder:"HOST:PORT" help:"Address to listen on; port 0 picks a free one. Loopback unless you say otherwise: anyone who can reach the address can read the run." env:"RUNNER_UI_LISTEN"`
	APIOnly     bool   `name:"api-only" help:"Serve the REST API and /events only, without the page." env:"RUNNER_UI_API_ONLY"`
	AllowCancel bool   `name:"allow-cancel" help:"Add a cancel button that writes .runner/cancel (the loop stops; a running agent or guard is stopped and its iteration recorded as interrupted), for a browser signed in with the one-time login link printed on the terminal runner-ui runs in (it needs one). Without it the UI never writes." env:"RUNNER_UI_ALLOW_CANCEL"`
	AllowAnswer bool   `name:"allow-answer" help:"Add an answer form to each waiting node: the answer goes through tree-edit answer (committed, or queued while a runner works), behind the same sign-in and checks as the cancel button." env:"RUNNER_UI_ALLOW_ANSWER"`
}

// Main runs runner-ui and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-ui", "Serve a live, read-only web UI of the run in the repository (-C DIR): the tree, the iterations, logs, diffs, run history. Prints its URL on stdout and serves until SIGINT or SIGTERM (exit 0).", &Options{}, args, stdin, stdout, stderr)
}

// Run executes the command.
func (o *Options) Run(env *cli.Env) error {
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return exit.Errorf(exit.Usage, "--listen %s: %w (want HOST:PORT, e.g. 127.0.0.1:0)", o.Listen, err)
	}
	// A server lives long: collect at the usual pace (cli.Run tunes the
	// short-lived commands for speed), with a soft limit that keeps a
	// 10,000-node tree and 1,000 iterations well inside 60 MiB.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(48 << 20)
	}
	// The writes' one-time login link goes to the operator's terminal
	// only: never to stdout or stderr, which a script may keep in a file
	// that a session can read.
	var term io.WriteCloser = nopCloser{io.Discard}
	if o.AllowCancel || o.AllowAnswer {
		if term, err = openTerminal(); err != nil {
			return exit.Errorf(exit.Usage, "--allow-cancel and --allow-answer need a terminal: runner-ui prints their one-time login link only on the terminal it runs in (%w); run it in one, or without them", err)
		}
		defer term.Close()
		keepFromSessions()
	}
	srv, err := ui.New(ui.Options{
		Root: env.Dir, NoAssets: o.APIOnly, AllowCancel: o.AllowCancel, AllowAnswer: o.AllowAnswer, TreeEdit: treeEdit(),
		Logf:   func(format string, args ...any) { env.Warnf(format, args...) },
		Notify: func(msg string) { fmt.Fprintf(term, "runner-ui: %s\n", msg) },
	})
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "listen on %s: %w", o.Listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		env.Warnf("listening on %s, not a loopback address: anyone who can reach it can read the run", ln.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintln(env.Stdout, url)
	what := "the UI"
	if o.APIOnly {
		what = "the API (no page)"
	}
	var allowed, verbs []string
	if o.AllowCancel {
		allowed, verbs = append(allowed, "cancel"), append(verbs, "cancel")
	}
	if o.AllowAnswer {
		allowed, verbs = append(allowed, "answers"), append(verbs, "answer")
	}
	mode := "read-only"
	if len(allowed) > 0 {
		mode = strings.Join(allowed, " and ") + " allowed, for a browser signed in with the link printed on this terminal"
	}
	fmt.Fprintf(env.Stderr, "runner-ui: serving %s for %s at %s (%s); Ctrl-C stops\n", what, env.Dir, url, mode)
	if token := srv.LoginToken(); token != "" {
		fmt.Fprintf(term, "runner-ui: to %s from your browser, open this link once (it signs one browser in, then is spent; a restart prints a new one):\n    %slogin?token=%s\n", strings.Join(verbs, " or "), url, token)
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	return nil
}

// treeEdit is the tree-edit executable the answer form runs: the one on
// PATH, else the one installed beside runner-ui.
func treeEdit() string {
	if p, err := exec.LookPath("tree-edit"); err == nil {
		return p
	}
	if self, err := os.Executable(); err == nil {
		return filepath.Join(filepath.Dir(self), "tree-edit")
	}
	return "tree-edit"
}

// openTerminal opens the controlling terminal, the operator's, for
// writing: what is written there goes to their screen, into no file.
var openTerminal = func() (io.WriteCloser, error) { return os.OpenFile("/dev/tty", os.O_WRONLY, 0) }

// keepFromSessions makes this process undumpable (PR_SET_DUMPABLE 0): a
// process of the same user that runs outside a PID namespace (a session
// where the kernel refuses one) can then neither read its memory, where
// the login token and the session secret are, nor its descriptors.
func keepFromSessions() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
