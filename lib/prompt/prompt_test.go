package prompt

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func sec(name string, n int, required bool) Section {
	return Section{Name: name, Heading: "## " + name, Body: strings.Repeat("é"+name[:1]+"\n", n/4), Required: required}
}

func actions(fits []Fit) map[string]string {
	m := map[string]string{}
	for _, f := range fits {
		m[f.Name] = f.Action
	}
	return m
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name     string
		sections []Section
		budget   int
		want     map[string]string
		over     bool
	}{
		{
			name:     "everything fits",
			sections: []Section{sec(Contract, 400, true), sec(Goal, 400, true), sec(Tree, 400, false), sec(Output, 400, true)},
			budget:   4096,
			want:     map[string]string{Contract: "kept", Goal: "kept", Tree: "kept", Output: "kept"},
		},
		{
			name:     "a large failure is cut, small sections stay",
			sections: []Section{sec(Contract, 1000, true), sec(History, 200, false), sec(Failure, 100000, false), sec(Questions, 200, false), sec(Output, 500, true)},
			budget:   4096,
			want:     map[string]string{Contract: "kept", History: "kept", Failure: "cut", Questions: "kept", Output: "kept"},
		},
		{
			name:     "cutting is not enough: drop in drop order",
			sections: []Section{sec(Contract, 2500, true), sec(History, 2000, false), sec(Tree, 2000, false), sec(Questions, 2000, false), sec(Output, 500, true)},
			budget:   4096,
			want:     map[string]string{Contract: "kept", History: "cut", Tree: "dropped", Questions: "dropped", Output: "kept"},
		},
		{
			name:     "required sections are never dropped",
			sections: []Section{sec(Contract, 5000, true), sec(Goal, 3000, true), sec(Assumptions, 1000, false), sec(Output, 500, true)},
			budget:   4096,
			want:     map[string]string{Contract: "kept", Goal: "kept", Assumptions: "dropped", Output: "kept"},
			over:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, fits, over := Build(tt.sections, tt.budget)
			if got := actions(fits); len(got) != len(tt.want) {
				t.Fatalf("fits = %v, want %v", got, tt.want)
			} else {
				for k, v := range tt.want {
					if got[k] != v {
						t.Errorf("%s: %s, want %s", k, got[k], v)
					}
				}
			}
			if (over > 0) != tt.over {
				t.Errorf("over = %d, want over: %v", over, tt.over)
			}
			if !tt.over && len(out) > tt.budget {
				t.Errorf("prompt is %d bytes, budget %d", len(out), tt.budget)
			}
			if tt.over && len(out) != tt.budget+over {
				t.Errorf("prompt is %d bytes, budget %d + over %d", len(out), tt.budget, over)
			}
			if !utf8.Valid(out) {
				t.Errorf("prompt is not valid UTF-8")
			}
			// Sections appear in Order.
			last := -1
			for _, f := range fits {
				if f.Action == "dropped" {
					continue
				}
				i := strings.Index(string(out), "## "+f.Name+"\n")
				if i < last {
					t.Errorf("section %s out of order", f.Name)
				}
				last = i
			}
			// Deterministic.
			again, _, _ := Build(tt.sections, tt.budget)
			if string(again) != string(out) {
				t.Errorf("two builds differ")
			}
		})
	}
}

func TestCutKeepsTheEndOfAFailure(t *testing.T) {
	body := "FIRST\n" + strings.Repeat("line\n", 5000) + "LAST\n"
	got := cut(body, 1000, true)
	if !strings.HasSuffix(got, "LAST\n") || strings.Contains(got, "FIRST") || !strings.HasPrefix(got, "[… ") {
		t.Errorf("tail cut = %.80q…", got)
	}
	got = cut(body, 1000, false)
	if !strings.HasPrefix(got, "FIRST\n") || strings.Contains(got, "LAST") || !strings.Contains(got, "bytes cut to fit") {
		t.Errorf("head cut = %.80q…", got)
	}
}

func TestCutOnRuneBoundary(t *testing.T) {
	body := strings.Repeat("日本語", 1000)
	for keep := 100; keep < 110; keep++ {
		for _, tail := range []bool{false, true} {
			if got := cut(body, keep, tail); !utf8.ValidString(got) {
				t.Errorf("cut(keep=%d, tail=%v) is not valid UTF-8", keep, tail)
			}
		}
	}
}

func TestFenceOutgrowsBackticks(t *testing.T) {
	for s, want := range map[string]string{"plain": "```", "a ``` b": "````", "`````": "``````"} {
		if got := Fence(s); got != want {
			t.Errorf("Fence(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestBuildKeepsTheEndOfTheFailure: over the budget, Build cuts the
// failure section from its start, keeping the end of the guard's output
// (where the failing test and its message are), and the other optional
// sections from their end, keeping their start.
func TestBuildKeepsTheEndOfTheFailure(t *testing.T) {
	failure := "FAIL-START\n" + strings.Repeat("=== RUN TestX\n", 5000) + "--- FAIL: TestLast\nFAIL-END\n"
	history := "HISTORY-START\n" + strings.Repeat("attempt: retry\n", 300) + "HISTORY-END\n"
	sections := []Section{
		sec(Contract, 1000, true),
		{Name: History, Heading: "## " + History, Body: history},
		{Name: Failure, Heading: "## " + Failure, Body: failure},
		sec(Output, 500, true),
	}
	out, fits, over := Build(sections, 4096)
	if got := actions(fits); got[History] != "cut" || got[Failure] != "cut" || over != 0 {
		t.Fatalf("fits = %v, over %d; want history and failure cut, nothing over", got, over)
	}
	prompt := string(out)
	_, fail, _ := strings.Cut(prompt, "## "+Failure+"\n")
	fail, _, _ = strings.Cut(fail, "## "+Output+"\n")
	if !strings.Contains(fail, "--- FAIL: TestLast\nFAIL-END\n") || strings.Contains(fail, "FAIL-START") {
		t.Errorf("the failure section did not keep its end:\n%.200s…", fail)
	}
	_, hist, _ := strings.Cut(prompt, "## "+History+"\n")
	hist, _, _ = strings.Cut(hist, "## "+Failure+"\n")
	if !strings.Contains(hist, "HISTORY-START\n") || strings.Contains(hist, "HISTORY-END") {
		t.Errorf("the history section did not keep its start:\n%.200s…", hist)
	}
}
