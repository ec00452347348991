// Package runnerenter is the runner-enter command: how the porcelain
// (tools/runner-step, tools/runner-loop) enters the repository it runs in
// (seed 004, DESIGN.md decisions 11, 12, 20, 21). `env` finds the
// repository and prints the shell lines that move there, make git hermetic
// and open descriptor 9 on .runner/lock; `lock` takes the runner lock on
// that descriptor (lib/runlock). Both say what failed in the porcelain's
// name, so its diagnostics read as its own.
package runnerenter

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
)

// Options is the command line of runner-enter.
type Options struct {
	Env     EnvCmd     `cmd:"" help:"Find the repository (DIR, else $TREELOOP_DIR, else the current directory; a subdirectory stands for its repository's root) and print, for the porcelain to eval, the shell lines that go to its root, drop TREELOOP_DIR, with --hermetic make every git process read the user's git config as it is now (lib/git Hermetic), and open descriptor 9 on .runner/lock unless it already is (inherited from runner-loop). Exit 1 no repository or no .runner, 6 the lock file cannot be opened, 80 DIR is not a directory."`
	Lock    LockCmd    `cmd:"" help:"Take the runner lock, an flock on .runner/lock, on descriptor 9 (opened by the lines env printed), without waiting, and write the holder's line (pid=PID command=AS) unless the descriptor held it already (a step under runner-loop shares the loop's hold). Exit 1 another runner holds it (the refusal names it), 6 the lock cannot be taken."`
	Version VersionCmd `cmd:"" help:"Print the porcelain's version line, \"<as> <version>\": the version of the whole install, for runner-step --version and runner-loop --version."`
}

// Main runs runner-enter and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-enter", "Enter the repository a runner works in, for tools/runner-step and tools/runner-loop: the repository's root, hermetic git, and the runner lock (one runner per repository).", &Options{}, args, stdin, stdout, stderr)
}

// porcelain names the porcelain a diagnostic speaks for.
type porcelain struct {
	As string `required:"" enum:"runner-step,runner-loop" help:"The porcelain that enters (runner-step or runner-loop): its name begins every diagnostic line and the holder's line."`
}

// fail prints "<as>: <what>" and returns the exit code as a silent error.
func (p porcelain) fail(env *cli.Env, code int, format string, args ...any) error {
	fmt.Fprintf(env.Stderr, "%s: %s\n", p.As, fmt.Sprintf(format, args...))
	return cli.Silent(code)
}

// EnvCmd is `runner-enter env`.
type EnvCmd struct {
	porcelain
	Dir      string `name:"chdir" short:"C" placeholder:"DIR" env:"TREELOOP_DIR" help:"The repository, or a directory inside it (default: the current directory)."`
	Hermetic bool   `help:"Make git hermetic for the porcelain and every command it starts: a snapshot of the user's system, global and command-line git config, taken now, in GIT_CONFIG_COUNT/KEY_n/VALUE_n with the files themselves off and no replace objects; the user's own values of those variables are kept as TREELOOP_USER_<name> for the agent and the guard (DESIGN.md decisions 11, 21). Nothing when the environment already is (TREELOOP_GIT_HERMETIC=1)."`
	Usage    string `placeholder:"LINE" help:"The porcelain's usage line, printed after the error when DIR is not a directory."`
}

// Run prints the shell lines.
func (e *EnvCmd) Run(env *cli.Env) error {
	start := e.Dir
	if start == "" {
		start = "."
	}
	if st, err := os.Stat(start); err != nil || !st.IsDir() {
		fmt.Fprintf(env.Stderr, "%s: -C %s: not a directory\n", e.As, start)
		if e.Usage != "" {
			fmt.Fprintln(env.Stderr, e.Usage)
		}
		return cli.Silent(exit.Usage)
	}
	// The step's facts the caller's environment held name nothing here.
	for _, v := range []string{git.StepRoot, git.StepBranch, git.StepHead, git.StepGitDirs} {
		os.Unsetenv(v)
	}
	// Hermetic git first: the step's git directories are asked in the
	// environment its commands will have (where the snapshot's
	// core.hooksPath, now command-line scope, outranks the repository's).
	var hermetic []string
	if e.Hermetic {
		before := os.Environ()
		if err := git.Hermetic(start); err != nil {
			return e.fail(env, exit.RunnerError, "%v", err)
		}
		hermetic = envChange(before, os.Environ())
	}
	// The git directories, asked with the root, for the seals and the
	// sandbox of the step's sessions (lib/git/step.go).
	repo, dirs, err := git.OpenDirs(start)
	if err != nil {
		return e.fail(env, exit.Negative, "%s is not inside a git repository: run it in your project's repository", start)
	}
	root := repo.Root()
	lines := []string{"cd -- " + cli.ShellQuote(root) + " || exit 6", "unset TREELOOP_DIR"}
	if kv := dirs.Env(); kv != "" && os.Getenv(git.HermeticVar) == "1" {
		name, value, _ := strings.Cut(kv, "=")
		lines = append(lines, "export "+name+"="+cli.ShellQuote(value))
	} else {
		// Not told: a command that makes git hermetic itself asks.
		lines = append(lines, "unset "+git.StepGitDirs)
	}
	lines = append(lines, hermetic...)
	if st, err := os.Stat(filepath.Join(root, layout.Runner)); err != nil || !st.IsDir() {
		return e.fail(env, exit.Negative, "no .runner in %s: run runner-init --goal GOAL.md, then runner-start", root)
	}
	lock := filepath.Join(root, layout.Lock)
	if !runlock.Shares(runlock.FD, lock) {
		if err := runlock.CanOpen(lock); err != nil {
			return e.fail(env, exit.RunnerError, "cannot open %s: %v (is the disk read-only or full?)", layout.Lock, fsutil.Cause(err))
		}
		lines = append(lines, fmt.Sprintf("exec %d>>%s", runlock.FD, layout.Lock))
	}
	_, err = fmt.Fprintln(env.Stdout, strings.Join(lines, "\n"))
	return err
}

// shellName is a variable name the shell can export.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envChange is the shell lines that turn the environment from into to:
// unset what to drops, export what it adds or changes.
func envChange(from, to []string) []string {
	var unset, export []string
	for _, kv := range from {
		name, _, _ := strings.Cut(kv, "=")
		if shellName.MatchString(name) && !slices.ContainsFunc(to, func(t string) bool { return strings.HasPrefix(t, name+"=") }) {
			unset = append(unset, name)
		}
	}
	for _, kv := range to {
		name, value, _ := strings.Cut(kv, "=")
		if shellName.MatchString(name) && !slices.Contains(from, kv) {
			export = append(export, "export "+name+"="+cli.ShellQuote(value))
		}
	}
	if len(unset) > 0 {
		export = append([]string{"unset " + strings.Join(unset, " ")}, export...)
	}
	return export
}

// LockCmd is `runner-enter lock`.
type LockCmd struct {
	porcelain
	PID int `required:"" help:"The porcelain's process id, for the holder's line."`
}

// Run takes the lock on descriptor 9.
func (l *LockCmd) Run(env *cli.Env) error {
	warn, err := runlock.Enter(env.Abs(layout.Lock), layout.Lock, l.PID, l.As)
	if errors.Is(err, runlock.ErrHeld) {
		return l.fail(env, exit.Negative, "%v", err)
	}
	if err != nil {
		return l.fail(env, exit.RunnerError, "%v", err)
	}
	if warn != nil {
		env.Warnf("%v", warn)
	}
	return nil
}

// VersionCmd is `runner-enter version`.
type VersionCmd struct {
	porcelain
}

// Run prints "<as> <version>", as --version prints the command's own.
func (v *VersionCmd) Run(env *cli.Env) error {
	fmt.Fprintf(env.Stdout, "%s %s\n", v.As, cli.Version())
	return nil
}
