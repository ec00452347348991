package runcheck

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
)

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/v1"
	l.Close()
	return u
}

// TestReach: any HTTP answer will do (a 404 at the base URL); a refused
// connection, a server that does not answer in time and a URL that is
// not http(s) are errors saying so.
func TestReach(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if err := reach(srv.URL+"/v1", time.Second); err != nil {
		t.Errorf("reach(a server) = %v", err)
	}
	if err := reach(closedURL(t), time.Second); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("reach(closed) = %v", err)
	}
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stop }))
	defer slow.Close()
	defer close(stop)
	if err := reach(slow.URL, 200*time.Millisecond); err == nil || err.Error() != "no answer within 200ms" {
		t.Errorf("reach(slow) = %v", err)
	}
	if err := reach("127.0.0.1:9/v1", time.Second); err == nil || err.Error() != "not an http(s) URL" {
		t.Errorf("reach(no scheme) = %v", err)
	}
}

// TestCheckEndpoint: a CLI without a key, an endpoint that does not
// answer, and a sandbox without network are problems naming what to set;
// a key and an answering endpoint pass; the command backend has none.
func TestCheckEndpoint(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("CLAUDE_CODE_OAUTH_TOKEN", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx := &Context{Root: t.TempDir(), Config: config.Default()}
	ctx.Config.Agent.Backend = "claude"
	t.Setenv("ANTHROPIC_BASE_URL", closedURL(t))
	got := checkEndpoint(ctx)
	if len(got) != 2 || got[0] != "the claude CLI has no API key: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN in the environment runner-loop runs in, or log in (claude, then /login)" ||
		!strings.HasPrefix(got[1], "the claude endpoint http://127.0.0.1:") || !strings.Contains(got[1], "(from ANTHROPIC_BASE_URL) does not answer: connect: connection refused") {
		t.Errorf("no key, closed endpoint: %q", got)
	}
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	if got := checkEndpoint(ctx); got != nil {
		t.Errorf("a key and a server: %q", got)
	}
	ctx.Config.Sandbox.Mode, ctx.Config.Sandbox.Network = config.SandboxBwrap, config.NetworkNone
	want := []string{`[sandbox] network = "none" keeps the claude CLI from its endpoint ` + srv.URL + `: set [sandbox] network = "host" in .runner/state/config.toml`}
	if got := checkEndpoint(ctx); !slices.Equal(got, want) {
		t.Errorf("no network: %q", got)
	}
	ctx.Config.Agent.Backend = "command"
	if got := checkEndpoint(ctx); got != nil {
		t.Errorf("command: %q", got)
	}
}
