// Package ci checks the fan-out examples (DESIGN.md decision 14):
// the GitHub Actions workflow with actionlint (shellcheck on its run
// scripts), the GitLab CI file's shape and its scripts with bash -n and
// shellcheck. No GitLab CI schema is available offline, so its keys are
// checked against the few this example uses instead.
package ci

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	yaml "go.yaml.in/yaml/v4"
)

// lint runs actionlint on a workflow with shellcheck, as in CI (.ci/run
// installs it: a missing shellcheck is a failure, not a skip).
func lint(t *testing.T, name string, src []byte) []*actionlint.Error {
	t.Helper()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatalf("shellcheck is needed to lint the workflow's scripts: %v", err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: sc})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(name, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

func TestGitHubActionsWorkflow(t *testing.T) {
	src, err := os.ReadFile("github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lint(t, "github-actions.yml", src) {
		t.Errorf("actionlint: %s", e.Error())
	}
	for _, want := range []string{"matrix:", "runner-start --id \"$RUN_ID\"", "runner-loop", "actions/upload-artifact@v4", "secrets.OPENAI_API_KEY", "if: always()"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the workflow lacks %q", want)
		}
	}
}

// TestActionlintCatches proves the check can fail: the workflow with a
// broken matrix reference and an undefined step output is refused.
func TestActionlintCatches(t *testing.T) {
	src, err := os.ReadFile("github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "${{ matrix.goal }}-${{ github.run_number }}", "${{ matrix.gaol }}-${{ steps.nope.outputs.id }}", 1)
	if bad == string(src) {
		t.Fatal("the mutation did not apply")
	}
	if errs := lint(t, "bad.yml", []byte(bad)); len(errs) == 0 {
		t.Fatal("actionlint found nothing wrong with a broken workflow")
	}
}

// gitlabJob is the part of a GitLab CI job this example uses.
type gitlabJob struct {
	Image    string `yaml:"image"`
	Timeout  string `yaml:"timeout"`
	Parallel struct {
		Matrix []map[string][]string `yaml:"matrix"`
	} `yaml:"parallel"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	Artifacts    struct {
		When  string   `yaml:"when"`
		Name  string   `yaml:"name"`
		Paths []string `yaml:"paths"`
	} `yaml:"artifacts"`
}

func TestGitLabCI(t *testing.T) {
	src, err := os.ReadFile("gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]gitlabJob
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("gitlab-ci.yml: %v", err)
	}
	job, ok := doc["treeloop"]
	if !ok || len(doc) != 1 {
		t.Fatalf("want one job, treeloop; got %d", len(doc))
	}
	if len(job.Parallel.Matrix) != 1 || len(job.Parallel.Matrix[0]["GOAL"]) == 0 {
		t.Errorf("parallel.matrix must list the goals under GOAL: %+v", job.Parallel.Matrix)
	}
	if job.Artifacts.When != "always" || !slices.Contains(job.Artifacts.Paths, ".runner/iterations/") || !slices.Contains(job.Artifacts.Paths, ".runner/runs/") {
		t.Errorf("artifacts must keep the iteration logs and run records always: %+v", job.Artifacts)
	}
	script := strings.Join(append(job.BeforeScript, job.Script...), "\n")
	for _, want := range []string{"runner-init --goal", "runner-start --id", "runner-loop", "git push"} {
		if !strings.Contains(script, want) {
			t.Errorf("the job's script lacks %q", want)
		}
	}
	// The scripts as GitLab's shell runs them: one file, checked by bash
	// and shellcheck (GitLab's variables declared first).
	f := filepath.Join(t.TempDir(), "job.sh")
	vars := "#!/usr/bin/env bash\n: \"${GOAL:?}\" \"${CI_PIPELINE_ID:?}\" \"${PUSH_TOKEN:?}\" \"${CI_SERVER_HOST:?}\" \"${CI_PROJECT_PATH:?}\"\n"
	if err := os.WriteFile(f, []byte(vars+script+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v: %s", err, out)
	}
	if out, err := exec.Command("shellcheck", "-s", "bash", f).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v: %s", err, out)
	}
}
