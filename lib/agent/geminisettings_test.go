package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestGeminiSettings: the system settings Gemini CLI is given are the
// machine's (none, or an empty file, read as {}) with chat compression
// off, written into the iteration directory and, where a cache directory
// only its owner may write exists, there too (the path returned); settings
// that are not plain JSON are an error that says so.
func TestGeminiSettings(t *testing.T) {
	sys := filepath.Join(t.TempDir(), "settings.json")
	t.Setenv(geminiSystemSettingsEnv, sys)
	for _, c := range []struct {
		name, data string // "" data: no file
		keep       string // a path of the machine's settings kept
	}{
		{"none", "", ""},
		{"empty", " \n", ""},
		{"the machine's", `{"ui":{"theme":"dark"},"model":{"name":"m"}}`, "ui.theme"},
	} {
		os.Remove(sys)
		if c.data != "" {
			if err := os.WriteFile(sys, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		iter := t.TempDir()
		path, ok, err := geminiSettings(iter)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rec, err := os.ReadFile(filepath.Join(iter, GeminiSettingsFile))
		if err != nil || gjson.GetBytes(rec, "model.compressionThreshold").Float() != geminiNoCompression {
			t.Errorf("%s: the record %s (%v)", c.name, rec, err)
		}
		if c.keep != "" && !gjson.GetBytes(rec, c.keep).Exists() {
			t.Errorf("%s: %s not kept: %s", c.name, c.keep, rec)
		}
		if ok {
			t.Cleanup(func() { os.Remove(path) })
			if data, err := os.ReadFile(path); err != nil || string(data) != string(rec) || !ownerWritableOnly(filepath.Dir(path)) {
				t.Errorf("%s: the settings given at %s: %s (%v)", c.name, path, data, err)
			}
		}
	}
	if err := os.WriteFile(sys, []byte("{ // a comment\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := geminiSettings(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not plain JSON") {
		t.Errorf("settings with a comment: %v", err)
	}
}

// TestOwnerWritableOnly: a directory qualifies only when neither it nor
// any directory above it may be written by its group or others.
func TestOwnerWritableOnly(t *testing.T) {
	if !ownerWritableOnly("/usr") {
		t.Error("/usr refused")
	}
	parent := filepath.Join(t.TempDir(), "parent")
	open := filepath.Join(parent, "open")
	if err := os.MkdirAll(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	if ownerWritableOnly(open) {
		t.Errorf("%s taken, under a directory others may write", open)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if ownerWritableOnly(open) {
		t.Error("a directory anyone may write taken")
	}
	if ownerWritableOnly(filepath.Join(open, "missing")) {
		t.Error("a directory that is not there taken")
	}
}
