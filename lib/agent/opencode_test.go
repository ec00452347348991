package agent

import (
	"testing"

	"github.com/tidwall/gjson"
)

// OpenCode's snapshots are off: "snapshot": false joins the user's
// OPENCODE_CONFIG_CONTENT, whose other keys are kept; content that is not a
// plain JSON object is left as the user wrote it.
func TestOpenCodeConfigContent(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", `{"snapshot":false}`, true},
		{"  ", `{"snapshot":false}`, true},
		{`{"provider":{"p":{"name":"P"}}}`, `{"provider":{"p":{"name":"P"}},"snapshot":false}`, true},
		{`{"snapshot":true,"model":"m"}`, `{"snapshot":false,"model":"m"}`, true},
		{"{// a comment\n\"model\":\"m\"}", "{// a comment\n\"model\":\"m\"}", false},
		{`["not", "an", "object"]`, `["not", "an", "object"]`, false},
	} {
		got, ok := openCodeConfigContent(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("openCodeConfigContent(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The session's environment carries the content, the last entry winning
// over the user's, which a node's own settings (ExtraEnv) may give.
func TestOpenCodeRunTurnsSnapshotsOff(t *testing.T) {
	t.Setenv("OPENCODE_CONFIG_CONTENT", `{"model":"from-the-user"}`)
	env := sessionEnv(t, OpenCode{}, `OPENCODE_CONFIG_CONTENT={"model":"from-the-node"}`)
	content := lastEnv(env, "OPENCODE_CONFIG_CONTENT")
	if m := gjson.Get(content, "model").String(); m != "from-the-node" {
		t.Errorf("OPENCODE_CONFIG_CONTENT = %q: the node's model is gone", content)
	}
	if s := gjson.Get(content, "snapshot"); !s.Exists() || s.Bool() {
		t.Errorf("OPENCODE_CONFIG_CONTENT = %q: snapshots are not off", content)
	}
}
