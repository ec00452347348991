// Package evalreport is the eval-report command (STYLE.md "The eval
// harness", item 7): it compares two eval summaries, A (before) and B
// (after), paired by case id and backend: per-cell deltas of the success
// rate, iterations, tokens, cost and wall time, Fisher's exact test per
// cell, and per backend a seeded bootstrap interval of the mean paired
// difference over cases with the cases that flipped and McNemar's test.
package evalreport

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/eval"
	"github.com/treeloop/treeloop/lib/exit"
)

// Options is the command line of eval-report.
type Options struct {
	cli.Chdir
	A       string `arg:"" name:"a" help:"The summary before: a summary-<id>.json file, or an eval run id (looked up in --results)."`
	B       string `arg:"" name:"b" help:"The summary after, likewise."`
	Results string `default:"eval/results" placeholder:"DIR" help:"Where eval run ids are looked up."`
	JSON    bool   `name:"json" help:"Print the comparison as JSON."`
}

// Main runs eval-report and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("eval-report", "Compare two eval summaries (A before, B after), paired by case: per-cell deltas and which differences are larger than run-to-run noise. Exit 0 when compared (warnings on stderr when the case sets differ), 1 when a summary cannot be read.", &Options{}, args, stdin, stdout, stderr)
}

// Run compares the two summaries.
func (o *Options) Run(env *cli.Env) error {
	load := func(s string) (eval.Summary, error) {
		p := env.Abs(s)
		if !strings.HasSuffix(s, ".json") {
			if _, err := os.Stat(p); err != nil {
				p = filepath.Join(env.Abs(o.Results), "summary-"+s+".json")
			}
		}
		sum, err := eval.LoadSummary(p)
		if err != nil {
			return sum, exit.Errorf(exit.Negative, "%v", err)
		}
		return sum, nil
	}
	a, err := load(o.A)
	if err != nil {
		return err
	}
	b, err := load(o.B)
	if err != nil {
		return err
	}
	cmp := eval.Compare(a, b)
	for _, w := range cmp.Warnings {
		env.Warnf("%s", w)
	}
	if o.JSON {
		_, err = env.Stdout.Write(eval.Encode(cmp))
		return err
	}
	_, err = fmt.Fprint(env.Stdout, cmp.Markdown())
	return err
}
