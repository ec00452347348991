package session

import (
	"strings"
	"testing"
)

// An answer a session wrote to the queue is a violation naming the file
// and saying why.
func TestForgedAnswers(t *testing.T) {
	got := ForgedAnswers("the agent's session", []string{"x-root.1.json"})
	if len(got) != 1 || !strings.HasPrefix(got[0], "the agent's session wrote .runner/answers/x-root.1.json with no operator's tree-edit answer") {
		t.Errorf("ForgedAnswers = %q", got)
	}
	if ForgedAnswers("the agent's session", nil) != nil {
		t.Error("reasons without a forged answer")
	}
}
