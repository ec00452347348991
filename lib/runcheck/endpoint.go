package runcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/layout"
)

// reachTimeout bounds the question whether the agent's endpoint answers.
const reachTimeout = 10 * time.Second

// checkEndpoint: the agent CLI's provider is reachable and the CLI has a
// key (agent.EndpointOf): one of the provider's key variables set, or a
// login or settings file standing in; the endpoint's base URL answering
// over HTTP (any status: a server is there), unless the sandbox takes
// the network away from the sessions, which is then the problem.
func checkEndpoint(ctx *Context) []string {
	a := ctx.Config.Agent
	home, _ := os.UserHomeDir()
	e, ok := agent.EndpointOf(a, ctx.Root, agent.EndpointEnv{Getenv: os.Getenv, Home: home})
	if !ok {
		return nil
	}
	var out []string
	if len(e.Keys) > 0 && !e.KeySet {
		login := ""
		if e.Login != "" {
			login = ", or log in (" + e.Login + ")"
		}
		out = append(out, fmt.Sprintf("the %s CLI has no API key: set %s in the environment runner-loop runs in%s", a.Backend, strings.Join(e.Keys, " or "), login))
	}
	if ctx.Config.Sandbox.Confined() && ctx.Config.Sandbox.Network == config.NetworkNone {
		return append(out, fmt.Sprintf("[sandbox] network = \"none\" keeps the %s CLI from its endpoint %s: set [sandbox] network = \"host\" in %s", a.Backend, e.URL, layout.Config))
	}
	if err := reach(e.URL, reachTimeout); err != nil {
		from := "the default"
		if e.URLFrom != from {
			from = "from " + e.URLFrom
		}
		out = append(out, fmt.Sprintf("the %s endpoint %s (%s) does not answer: %v: start it or check the network, or point the CLI at another", a.Backend, e.URL, from, err))
	}
	return out
}

// reach asks rawURL with a GET, without credentials, within timeout: any
// HTTP answer will do. The error says what failed, in a few words.
func reach(rawURL string, timeout time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("not an http(s) URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		var dnsErr *net.DNSError
		var opErr *net.OpError
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("no answer within %s", timeout)
		case errors.As(err, &dnsErr):
			return fmt.Errorf("cannot resolve %s", dnsErr.Name)
		case errors.As(err, &opErr):
			return opErr.Err
		}
		return err
	}
	resp.Body.Close()
	return nil
}
