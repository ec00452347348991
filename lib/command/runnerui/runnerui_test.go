package runnerui

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--listen", "nonsense"}, 80, "runner-ui: --listen nonsense: address nonsense: missing port in address (want HOST:PORT, e.g. 127.0.0.1:0)\n"},
		{[]string{"-C", "/nonexistent/dir"}, 80, "runner-ui: -C /nonexistent/dir: stat /nonexistent/dir: no such file or directory\n"},
		{[]string{"--listen", "127.0.0.1:99999"}, 6, "runner-ui: listen on 127.0.0.1:99999: listen tcp: address 99999: invalid port\n"},
	} {
		var out, errb bytes.Buffer
		if code := Main(c.args, nil, &out, &errb); code != c.code || errb.String() != c.msg || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q", c.args, code, out.String(), errb.String(), c.code, c.msg)
		}
	}
}

// runner-ui prints its URL on stdout, serves, and ends with exit 0 on
// SIGTERM.
func TestServeUntilSignal(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".runner", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Main([]string{"-C", dir, "--api-only"}, nil, pw, &errb); pw.Close() }()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, %v", url, err)
	}
	go io.Copy(io.Discard, pr)
	url = strings.TrimSpace(url)
	res, err := http.Get(url + "api/config")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"read_only":true`) {
		t.Fatalf("/api/config: %d %s", res.StatusCode, body)
	}
	if res, err := http.Get(url); err != nil || res.StatusCode != 404 {
		t.Fatalf("--api-only serves the page: %v %v", res, err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("runner-ui did not stop on SIGTERM")
	}
	if want := "runner-ui: serving the API (no page) for " + dir + " at " + url + " (read-only); Ctrl-C stops\n"; errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
}
