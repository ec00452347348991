package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunToFile: what RunToFile reports beside the run. A log that cannot
// be created runs nothing (exit -1); a sink other than the log that fails
// is the error, the log still whole; a log that cannot be synced (a
// device: fsync gives EINVAL) is the error of a run that went well, and a
// command that cannot start is the error of one that did not, before the
// sync's.
func TestRunToFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, _, err := RunToFile(context.Background(), Spec{Argv: sh("echo ran > ran")}, filepath.Join(dir, "missing", "guard.log"), 1<<20)
	if err == nil || !strings.HasPrefix(err.Error(), "create log: ") || res.ExitCode != -1 || !res.Started.IsZero() {
		t.Errorf("unwritable log: %+v, %v", res, err)
	}

	logPath := filepath.Join(dir, "guard.log")
	res, info, err := RunToFile(context.Background(), Spec{Argv: sh("echo one; echo two"), Tee: &failWriter{after: 2}}, logPath, 1<<20)
	if err == nil || !strings.HasPrefix(err.Error(), "write tee: ") || res.ExitCode != 0 {
		t.Errorf("failing tee: %+v, %v", res, err)
	}
	if data, _ := os.ReadFile(logPath); string(data) != "one\ntwo\n" || info.Bytes != 8 || info.Truncated {
		t.Errorf("failing tee: log %q, %+v", data, info)
	}

	res, _, err = RunToFile(context.Background(), Spec{Argv: sh("exit 4")}, os.DevNull, 1<<20)
	if err == nil || !strings.HasPrefix(err.Error(), "sync log: ") || res.ExitCode != 4 {
		t.Errorf("a log that cannot be synced: %+v, %v", res, err)
	}
	_, _, err = RunToFile(context.Background(), Spec{Argv: []string{"definitely-not-a-command"}}, os.DevNull, 1<<20)
	var se *StartError
	if !errors.As(err, &se) {
		t.Errorf("a command that cannot start, a log that cannot be synced: %v, want the start error", err)
	}
}

// TestRunToFileTruncated: a log over its cap says so, and counts what the
// command printed, kept or not.
func TestRunToFileTruncated(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "guard.log")
	_, info, err := RunToFile(context.Background(), Spec{Argv: sh("head -c 5000 /dev/zero")}, logPath, 1000)
	if err != nil || info.Bytes != 5000 || !info.Truncated {
		t.Fatalf("RunToFile = %+v, %v", info, err)
	}
	if data, _ := os.ReadFile(logPath); len(data) != 1000 || !strings.Contains(string(data), "bytes truncated]") {
		t.Errorf("log of %d bytes: %q", len(data), data)
	}
}
