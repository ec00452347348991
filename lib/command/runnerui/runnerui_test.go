package runnerui

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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

// --allow-cancel and --allow-answer print their one-time login link on
// the terminal only: never on stdout or stderr. Without a terminal they
// are refused.
func TestLoginLinkOnTerminalOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".runner", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(f func() (io.WriteCloser, error)) { openTerminal = f }(openTerminal)
	openTerminal = func() (io.WriteCloser, error) { return nil, errors.New("open /dev/tty: no such device or address") }
	var out, errb bytes.Buffer
	if code := Main([]string{"-C", dir, "--allow-cancel"}, nil, &out, &errb); code != 80 || out.Len() != 0 ||
		errb.String() != "runner-ui: --allow-cancel and --allow-answer need a terminal: runner-ui prints their one-time login link only on the terminal it runs in (open /dev/tty: no such device or address); run it in one, or without them\n" {
		t.Fatalf("without a terminal: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}

	termR, termW := io.Pipe()
	openTerminal = func() (io.WriteCloser, error) { return termW, nil }
	pr, pw := io.Pipe()
	errb.Reset()
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"-C", dir, "--allow-cancel", "--allow-answer"}, nil, pw, &errb)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\n$`).MatchString(url) {
		t.Fatalf("stdout %q, %v", url, err)
	}
	go io.Copy(io.Discard, pr)
	url = strings.TrimSpace(url)
	lines := make(chan string, 10) // the terminal, read as a terminal is: never holding a write up
	go func() {
		sc := bufio.NewScanner(termR)
		for sc.Scan() {
			lines <- sc.Text() + "\n"
		}
		close(lines)
	}()
	first, link := <-lines, <-lines
	if first != "runner-ui: to cancel or answer from your browser, open this link once (it signs one browser in, then is spent; a restart prints a new one):\n" ||
		!regexp.MustCompile(`^    `+regexp.QuoteMeta(url)+`login\?token=[0-9a-f]{32}\n$`).MatchString(link) {
		t.Fatalf("the terminal: %q %q", first, link)
	}
	link = strings.TrimSpace(link)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(link)
	if err != nil || res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("sign-in: %v %v", res, err)
	}
	res.Body.Close()
	said := <-lines
	if !strings.HasPrefix(said, "runner-ui: signed in with the login link from 127.0.0.1:") {
		t.Fatalf("the terminal after the sign-in: %q", said)
	}
	req, _ := http.NewRequest("POST", url+"api/cancel", nil)
	req.Header.Set("Origin", strings.TrimSuffix(url, "/"))
	req.AddCookie(res.Cookies()[0])
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("cancel: %v %v", res, err)
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
	token := link[strings.Index(link, "token=")+6:]
	if strings.Contains(errb.String(), token) {
		t.Fatalf("stderr holds the token: %q", errb.String())
	}
	if want := "runner-ui: serving the UI for " + dir + " at " + url + " (cancel and answers allowed, for a browser signed in with the link printed on this terminal); Ctrl-C stops\n"; errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
}
