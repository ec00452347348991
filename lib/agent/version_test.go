package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A CLI's version is asked once per binary: later sessions read the cache,
// and a changed binary is asked again.
func TestCLIVersionCachedPerBinary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "fakecli")
	write := func(version string) {
		script := "#!/bin/sh\necho x >> " + calls + "\necho '" + version + "'\n"
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		data, _ := os.ReadFile(calls)
		return strings.Count(string(data), "x")
	}
	write("fakecli 1.0.0")
	if _, ok := CachedCLIVersion(bin); ok {
		t.Fatal("cached before it was asked")
	}
	for range 3 {
		if v := cliVersion(context.Background(), bin); v != "fakecli 1.0.0" {
			t.Fatalf("cliVersion = %q", v)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("the CLI was asked %d times, want 1", n)
	}
	// A new binary (another size and modification time) is asked again.
	write("fakecli 1.0.10")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	if v := cliVersion(context.Background(), bin); v != "fakecli 1.0.10" {
		t.Fatalf("cliVersion after an upgrade = %q", v)
	}
	if n := count(); n != 2 {
		t.Errorf("the CLI was asked %d times, want 2", n)
	}
}
