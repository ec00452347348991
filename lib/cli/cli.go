// Package cli runs one treeloop command: kong parsing into the command's
// options struct, the shared -C flag, one-line diagnostics and the exit-code
// table of lib/exit. Every command's Main is a call to Run.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"
	"github.com/willabides/kongplete"

	_ "github.com/treeloop/treeloop/lib/cli/internal/stack" // the main goroutine's stack, grown once at start
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/trace"
)

// Env is what a command's Run method receives: its streams and the directory
// it runs as if started in (-C).
type Env struct {
	Name   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dir    string // absolute
}

// Abs resolves p against the -C directory.
func (e *Env) Abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.Dir, p)
}

// Rel shows p relative to the -C directory when it lies inside it.
func (e *Env) Rel(p string) string {
	if r, err := filepath.Rel(e.Dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

// Warnf prints a one-line warning; warnings never change the exit code.
func (e *Env) Warnf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: warning: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// Errorf prints one diagnostic line without ending the command.
func (e *Env) Errorf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// Chdir is the -C flag every command embeds.
type Chdir struct {
	Chdir string `name:"chdir" short:"C" placeholder:"DIR" help:"Run as if started in DIR." env:"TREELOOP_DIR" predictor:"dir"`
}

// Silent is returned by a command that has already printed its diagnostics
// and wants only the exit code.
type Silent int

func (s Silent) Error() string { return fmt.Sprintf("exit %d", int(s)) }

// ExitCode implements the exit-code interface of lib/exit.
func (s Silent) ExitCode() int { return int(s) }

type exitPanic int

// Run parses args into cmd (a kong struct with a Run(*Env) error method,
// optionally with subcommands) and runs it. It returns the exit code:
// usage errors 80, --help 0, otherwise the code the error carries
// (lib/exit), printing "<name>: <error>" to stderr for non-silent errors.
func Run(name, description string, cmd any, args []string, stdin io.Reader, stdout, stderr io.Writer, opts ...kong.Option) (code int) {
	env := &Env{Name: name, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	// RUNNER_TRACE=1: one line with this process's wall time.
	traced := name
	trace.SetName(name)
	defer func() { trace.Command(stderr, traced, code) }()
	deferSignals()
	// Nothing this command starts inherits runner-step's lock (once
	// a detached git survived a killed step and held it).
	proc.CloseInherited()
	// The commands are short-lived and allocate while validating: collect
	// rarely, with a soft limit so a huge tree still stays bounded.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(2 << 30)
	}
	defer func() {
		if r := recover(); r != nil {
			code = recovered(name, r, stderr)
		}
	}()
	options := append([]kong.Option{
		kong.Name(name),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitPanic(c)) }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: false}),
		kong.ValueFormatter(helpValue),
		kong.Bind(env),
	}, opts...)
	options = append(options, kong.Embed(&versionFlag{}))
	kctx := (*kong.Context)(nil)
	if os.Getenv("COMP_LINE") == "" {
		kctx = parseOne(cmd, args, options)
	}
	if kctx == nil {
		parser, err := kong.New(cmd, options...)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return exit.RunnerError
		}
		// Shell completion: a shell that runs the command with
		// COMP_LINE set (complete -C) gets the candidates on stdout.
		if os.Getenv("COMP_LINE") != "" {
			kongplete.Complete(parser,
				kongplete.WithPredictor("dir", complete.PredictDirs("*")),
				kongplete.WithPredictor("file", complete.PredictFiles("*")),
				kongplete.WithPredictor("node", predictNodes),
				kongplete.WithPredictor("run", predictRuns),
				kongplete.WithExitFunc(func(c int) { panic(exitPanic(c)) }))
		}
		kctx, err = parser.Parse(args)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return exit.Usage
		}
	}
	if sel := kctx.Selected(); sel != nil {
		traced = name + "-" + sel.Name // iter-log-begin, loop-commit-check
	}
	dir := "."
	if c, ok := findChdir(cmd); ok && c.Chdir != "" {
		dir = c.Chdir
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		var st os.FileInfo
		st, err = os.Stat(abs)
		if err == nil && !st.IsDir() {
			err = fmt.Errorf("not a directory")
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: -C %s: %v\n", name, dir, err)
		return exit.Usage
	}
	env.Dir = abs
	return report(name, kctx.Run(env), stderr)
}

// report is the exit code of a command's run that returned err, said
// on stderr as "name: message" unless it is Silent.
func report(name string, err error, stderr io.Writer) int {
	if err == nil {
		return exit.OK
	}
	var s Silent
	if !errors.As(err, &s) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
	}
	return exit.Code(err)
}

// Call runs core, a command's work with its options already set, in this
// process as Run runs the command: on env's directory and writers, with
// env's Name set to the command (its warnings say so), an error said on
// stderr as "<command>: message" (a Silent one not), a panic recovered as
// a runner error (exit 6) with its stack, never the caller's crash. It
// returns the command's exit code. name is the command and, after a
// space, its subcommand ("iter-log begin"). While tracing
// (RUNNER_TRACE=1) it prints the command's line (lib/trace:
// cmd=iter-log-begin), its ms the call's wall time. runner-step's Go
// halves (step-begin, step-end) call the plumbing commands' cores so.
func Call(name string, env *Env, core func(*Env) error) (code int) {
	cmd, _, _ := strings.Cut(name, " ")
	e := *env
	e.Name = cmd
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			code = recovered(cmd, r, e.Stderr)
		}
		trace.Call(e.Stderr, strings.ReplaceAll(name, " ", "-"), time.Since(start), code)
	}()
	return report(cmd, core(&e), e.Stderr)
}

// recovered is the exit code of a command that panicked with r: kong's
// exit, a memory fault (a mapped input, fsutil.MapFile, truncated while
// read under debug.SetPanicOnFault), or a bug, said with its stack and a
// runner error, never the runtime's exit 2, which a step reads as
// "complete".
func recovered(name string, r any, stderr io.Writer) int {
	if c, ok := r.(exitPanic); ok {
		return int(c)
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		fmt.Fprintf(stderr, "%s: an input file changed while it was being read (fault at %#x); run the command again\n", name, f.Addr())
		return exit.RunnerError
	}
	fmt.Fprintf(stderr, "%s: internal error: %v\n%s", name, r, debug.Stack())
	return exit.RunnerError
}

func findChdir(cmd any) (*Chdir, bool) {
	type hasChdir interface{ chdir() *Chdir }
	if h, ok := cmd.(hasChdir); ok {
		return h.chdir(), true
	}
	return nil, false
}

func (c *Chdir) chdir() *Chdir { return c }

// versionFlag is the --version flag every command has.
type versionFlag struct {
	Version printVersion `name:"version" help:"Print the version and exit."`
}

// printVersion is kong.VersionFlag without the "version" variable: it
// prints "<name> <version>" and exits 0, reading the build information
// (Version) only when --version is given. A kong variable would be read at
// every start and interpolated into every flag's variables while kong
// builds the model.
type printVersion bool

// BeforeReset prints the version and terminates with exit status 0.
func (printVersion) BeforeReset(app *kong.Kong) error {
	fmt.Fprintln(app.Stdout, app.Model.Name+" "+Version())
	app.Exit(0)
	return nil
}

// version and commit are set at link time (-ldflags "-X
// github.com/treeloop/treeloop/lib/cli.version=v1.2.3 -X
// github.com/treeloop/treeloop/lib/cli.commit=<sha>[-dirty]"; just build,
// just install): a build without VCS stamping (-buildvcs=false, GOFLAGS)
// still says its commit.
var (
	version = ""
	commit  = ""
)

// Version is treeloop's version: the link-time version, else the module
// version (go install …@vX), else "devel"; then "+" and the commit (12
// hex digits, "-dirty" when the checkout had changes) that go build
// recorded, else the link-time commit, when either is known.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	v, rev, dirty := version, commit, ""
	if ok {
		if m := bi.Main.Version; v == "" && m != "" && m != "(devel)" {
			v = m
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	rev, linkDirty := strings.CutSuffix(rev, "-dirty")
	if linkDirty {
		dirty = "-dirty"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += "+" + rev + dirty
	}
	return v
}
