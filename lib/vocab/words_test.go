package vocab

import "testing"

// Every field lists distinct words; StatusOf gives each result its
// status word.
func TestFields(t *testing.T) {
	for _, f := range Fields {
		seen := map[string]bool{}
		for _, w := range f.Words {
			if w.Word == "" || w.Meaning == "" || seen[w.Word] {
				t.Errorf("%s: word %q (meaning %q) empty or repeated", f.Name, w.Word, w.Meaning)
			}
			seen[w.Word] = true
		}
	}
	for r, want := range map[Result]Status{
		ResultPassed: StatusDone, ResultFailed: StatusDone, ResultRetry: StatusRetry, ResultAgentError: StatusRetry,
		ResultDecomposed: StatusDecomposed, ResultTimeout: StatusTimeout, ResultInterrupted: StatusInterrupted, ResultRunnerError: StatusRunnerError,
	} {
		if got := StatusOf(r); got != want {
			t.Errorf("StatusOf(%s) = %s, want %s", r, got, want)
		}
	}
}
