package agent

import (
	"bytes"
	"testing"
)

// Event lines as the real CLIs printed them against the scripted server.
func TestLiveView(t *testing.T) {
	tests := []struct {
		backend, events, want string
	}{
		{"claude", `{"type":"system","subtype":"init","cwd":"/r"}
{"type":"assistant","message":{"content":[{"id":"toolu_0","input":{"command":"echo hi > hello.txt","description":"Write"},"name":"Bash","type":"tool_use"}]}}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_0","type":"tool_result","content":"ok"}]}}
{"type":"assistant","message":{"content":[{"text":"Done.","type":"text"}]}}
`, "claude: tool Bash: echo hi > hello.txt\nclaude: says: Done.\n"},
		{"codex", `{"type":"thread.started","thread_id":"x"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hi > hello.txt'","exit_code":null}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hi > hello.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"{\"status\":\"done\"}"}}
`, "codex: run: /bin/bash -lc 'echo hi > hello.txt' (exit 0)\ncodex: says: {\"status\":\"done\"}\n"},
		{"opencode", `{"type":"step_start","part":{"type":"step-start"}}
{"type":"tool_use","part":{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"ls","description":"List"}}}}
{"type":"text","part":{"type":"text","text":"All\ngood"}}
`, "opencode: tool bash: ls\nopencode: says: All good\n"},
		{"gemini", "Warning: no colors\n" + `{"type":"init","model":"m"}
{"type":"message","role":"user","content":"the prompt"}
{"type":"message","role":"assistant","content":"Running ","delta":true}
{"type":"message","role":"assistant","content":"make.","delta":true}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"make"}}
{"type":"message","role":"assistant","content":"{\"status\":\"done\"}","delta":true}
{"type":"result","status":"success"}
`, "Warning: no colors\ngemini: says: Running make.\ngemini: tool run_shell_command: make\ngemini: says: {\"status\":\"done\"}\ngemini: result: success\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		w := LiveView(tt.backend, &out)
		// Byte by byte: lines arrive split anywhere.
		for i := range len(tt.events) {
			w.Write([]byte{tt.events[i]})
		}
		if out.String() != tt.want {
			t.Errorf("%s live view:\n%s\nwant:\n%s", tt.backend, out.String(), tt.want)
		}
	}
}

// Each CLI's stream names it by its first event; other text does not.
func TestSniffBackend(t *testing.T) {
	for head, want := range map[string]string{
		`{"type":"system","subtype":"init","cwd":"/r"}` + "\n":             "claude",
		`{"type":"thread.started","thread_id":"x"}` + "\n{\"type\":\"item": "codex",
		`{"type":"step_start","part":{}}`:                                  "opencode",
		"Warning: no colors\n" + `{"type":"init","model":"m"}` + "\n":      "gemini",
		`{"type":"item.completed"}` + "\n":                                 "",
		"plain text\n":                                                     "",
		"":                                                                 "",
	} {
		if got := SniffBackend([]byte(head)); got != want {
			t.Errorf("SniffBackend(%q) = %q, want %q", head, got, want)
		}
	}
}
