package cli

import (
	"bytes"
	"strings"
	"testing"
)

type helpOpts struct {
	Chdir
	Runs    int    `default:"3" placeholder:"N" help:"Runs per case."`
	Results string `default:"eval/results" placeholder:"DIR" help:"Where results go"`
	Last    int    `default:"5" help:"How many to show."`
	ID      string `default:"x" placeholder:"ID" help:"Name it (default: a timestamp)."`
	Keep    bool   `default:"false" help:"Keep it."`
}

func (o *helpOpts) Run(*Env) error { return nil }

// --help states every default: in the text when a placeholder hides it,
// not twice when kong shows it as the placeholder or the text says it.
func TestHelpShowsDefaults(t *testing.T) {
	var out bytes.Buffer
	if code := Run("t", "", &helpOpts{}, []string{"--help"}, nil, &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"--runs=N Runs per case (default: 3).",
		"--results=DIR Where results go (default: eval/results)",
		"--last=5 How many to show. ",
		"--id=ID Name it (default: a timestamp).",
		"--keep Keep it.",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

// A build without VCS stamping says the commit stamped at link time.
func TestVersionSaysTheLinkedCommit(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "", "0123456789abcdef0123456789abcdef01234567-dirty"
	// A test binary records no VCS settings: the linked commit is it.
	if got := Version(); got != "devel+0123456789ab-dirty" {
		t.Errorf("Version() = %q", got)
	}
	version = "v1.2.3"
	if got := Version(); got != "v1.2.3+0123456789ab-dirty" {
		t.Errorf("Version() with a linked version = %q", got)
	}
}
