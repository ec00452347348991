package agent

import "github.com/treeloop/treeloop/lib/config"

// The permission mode ([agent] permission_mode, seed 004 permissionMode)
// as each CLI takes it. full lets the CLI do anything, edits lets it edit
// files but run no shell command, read-only lets it write nothing; the
// runner's checks after the session apply whatever the mode.

// claudePermissionMode is Claude Code's --permission-mode: bypassPermissions,
// acceptEdits (a Bash call, with nobody to approve it, is denied), plan.
func claudePermissionMode(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return "acceptEdits"
	case config.PermissionReadOnly:
		return "plan"
	}
	return "bypassPermissions"
}

// codexPermissionArgs are Codex's sandbox and approval flags. Codex cannot
// refuse shell commands while it allows edits: under edits they run in
// its workspace-write sandbox (writes only in the repository), under
// read-only in its read-only sandbox; approvals are never asked.
func codexPermissionArgs(mode string) []string {
	switch mode {
	case config.PermissionEdits:
		return []string{"--sandbox", "workspace-write", "-c", `approval_policy="never"`}
	case config.PermissionReadOnly:
		return []string{"--sandbox", "read-only", "-c", `approval_policy="never"`}
	}
	return []string{"--dangerously-bypass-approvals-and-sandbox"}
}

// geminiApprovalMode is Gemini CLI's --approval-mode: yolo, auto_edit (a
// shell command, with nobody to approve it, is refused), plan.
func geminiApprovalMode(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return "auto_edit"
	case config.PermissionReadOnly:
		return "plan"
	}
	return "yolo"
}

// openCodePermission is OPENCODE_PERMISSION, OpenCode's permission rules
// over the user's configuration: every tool allowed (a rule that asks would
// be refused, with nobody to ask); edits allowed and bash denied; or both
// denied (the tools go away).
func openCodePermission(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return `{"edit":"allow","bash":"deny"}`
	case config.PermissionReadOnly:
		return `{"edit":"deny","bash":"deny"}`
	}
	return `{"*":"allow"}`
}
