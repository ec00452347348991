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
	AllowCancel bool   `name:"allow-cancel" help:"Add a cancel button that writes .runner/cancel (the loop stops; a running agent or guard is stopped and its iteration recorded as interrupted). Without it the UI never writes." env:"RUNNER_UI_ALLOW_CANCEL"`
	AllowAnswer bool   `name:"allow-answer" help:"Add an answer form to each waiting node: the answer goes through tree-edit answer (committed, or queued while a runner works), behind the same origin and token checks as the cancel button." env:"RUNNER_UI_ALLOW_ANSWER"`
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
	srv, err := ui.New(ui.Options{
		Root: env.Dir, NoAssets: o.APIOnly, AllowCancel: o.AllowCancel, AllowAnswer: o.AllowAnswer, TreeEdit: treeEdit(),
		Logf: func(format string, args ...any) { env.Warnf(format, args...) },
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
	var allowed []string
	if o.AllowCancel {
		allowed = append(allowed, "cancel")
	}
	if o.AllowAnswer {
		allowed = append(allowed, "answers")
	}
	mode := "read-only"
	if len(allowed) > 0 {
		mode = strings.Join(allowed, " and ") + " allowed"
	}
	fmt.Fprintf(env.Stderr, "runner-ui: serving %s for %s at %s (%s); Ctrl-C stops\n", what, env.Dir, url, mode)
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
