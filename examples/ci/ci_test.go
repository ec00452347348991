// Package ci checks the fan-out examples (DESIGN.md decision 14):
// the GitHub Actions workflow with actionlint (shellcheck on its run
// scripts), the GitLab CI file's shape and its scripts with bash -n and
// shellcheck. No GitLab CI schema is available offline, so its keys are
// checked against the few this example uses instead. actionlint is a
// tool, pinned in a module of its own (examples/ci/lint) and built into the
// go command's cache: none of its code enters treeloop's go.mod.
package ci

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// actionlint is the pinned actionlint (examples/ci/lint's tool), built
// once into the go command's cache (go tool -n builds it and prints its
// path); its path, or the build's error.
var actionlint = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "-C", "lint", "tool", "-n", "actionlint").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", errors.New("go tool -n actionlint: " + err.Error() + ": " + string(ee.Stderr))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

// lint runs actionlint on a workflow with shellcheck, as in CI (.ci/run
// installs it: a missing shellcheck is a failure, not a skip), and
// returns the problems it reports, one per line.
func lint(t *testing.T, name string, src []byte) []string {
	t.Helper()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatalf("shellcheck is needed to lint the workflow's scripts: %v", err)
	}
	bin, err := actionlint()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-shellcheck", sc, "-no-color", "-oneline", f)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 1: // problems found
		return strings.Split(strings.TrimSpace(stdout.String()), "\n")
	default:
		t.Fatalf("actionlint: %v: %s", err, stderr.String())
		return nil
	}
}

func TestGitHubActionsWorkflow(t *testing.T) {
	src, err := os.ReadFile("github-actions.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lint(t, "github-actions.yml", src) {
		t.Errorf("actionlint: %s", e)
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
