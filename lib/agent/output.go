package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/schemas"
)

// CLISchema is the agent output schema as the CLIs' structured-output
// modes take it, on one line: without "$schema", "$id" and the "allOf"
// conditional (children only with status decomposed), which Claude Code
// silently refuses (it then offers no StructuredOutput tool at all), and
// with a child's evidence required, as strict modes want every property.
// agent-exec still validates every answer against the full schema.
func CLISchema() (string, error) {
	var m map[string]any
	if err := json.Unmarshal(schemas.AgentOutputV1, &m); err != nil {
		return "", err
	}
	delete(m, "$schema")
	delete(m, "$id")
	delete(m, "allOf")
	// Strict structured output wants every property required: a child's
	// optional evidence is asked for always (witness, the default, or suite).
	if child, ok := nested(m, "properties", "children", "items").(map[string]any); ok {
		if req, ok := child["required"].([]any); ok {
			child["required"] = append(req, "evidence")
		}
	}
	b, err := jsondoc.Compact(m)
	return string(b), err
}

// nested is the value at the keys of nested objects in m, nil when a
// key is missing or a value on the way is not an object.
func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

// ReadOutputFile reads the output JSON an agent wrote to path, refusing a
// symlink or anything but a regular file and anything over
// schema.AgentOutputMaxBytes. On failure it returns the class and message.
func ReadOutputFile(path string) (data []byte, class, message string) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ClassNoOutput, "no output: the agent did not write $RUNNER_OUTPUT"
	}
	if err != nil {
		return nil, ClassNoOutput, fmt.Sprintf("no output: %v", err)
	}
	if !st.Mode().IsRegular() {
		kind := "a special file"
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			kind = "a symlink"
		case st.IsDir():
			kind = "a directory"
		}
		return nil, ClassInvalidOutput, fmt.Sprintf("output is not a regular file but %s: symlinks and special files are refused", kind)
	}
	// O_NOFOLLOW: a symlink swapped in after the Lstat is refused too.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, ClassInvalidOutput, fmt.Sprintf("output cannot be read: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, ClassInvalidOutput, "output is not a regular file: symlinks and special files are refused"
	}
	data, err = io.ReadAll(io.LimitReader(f, schema.AgentOutputMaxBytes+1))
	if err != nil {
		return nil, ClassNoOutput, fmt.Sprintf("no output: %v", err)
	}
	if len(data) > schema.AgentOutputMaxBytes {
		return nil, ClassInvalidOutput, fmt.Sprintf("output is larger than %d bytes", schema.AgentOutputMaxBytes)
	}
	// Under the sandbox the file exists (empty) before the agent runs.
	if len(data) == 0 {
		return nil, ClassNoOutput, "no output: the agent left $RUNNER_OUTPUT empty"
	}
	return data, "", ""
}

// unfence returns the body of text when text is exactly one fenced code
// block (```json … ```), else text unchanged.
func unfence(text string) string {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") || len(text) < 6 {
		return text
	}
	body := strings.TrimSuffix(text[3:], "```")
	nl := strings.IndexByte(body, '\n')
	if nl < 0 || strings.Contains(body, "```") {
		return text
	}
	if lang := strings.TrimSpace(body[:nl]); lang != "" && lang != "json" {
		return text
	}
	return strings.TrimSpace(body[nl+1:])
}

// textAnswer reads the answer of a CLI that gives it as text (OpenCode,
// Gemini CLI) into res: past maxAnswerText it is invalid output, blank it
// is no output ("no output: <cli> exited <exit> without <what>"), else the
// output JSON, taken out of its fence if it is in one (unfence).
func textAnswer(cli, what string, exit int, answer *answerText, res *Result) {
	if msg, over := answer.Over(); over {
		res.Class, res.Message = ClassInvalidOutput, cli+": "+msg
		return
	}
	text := strings.TrimSpace(answer.String())
	if text == "" {
		res.Class = ClassNoOutput
		res.Message = fmt.Sprintf("no output: %s exited %d without %s", cli, exit, what)
		return
	}
	res.Output = []byte(unfence(text))
}
