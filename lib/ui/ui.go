// Package ui is runner-ui's server (seed 000 §14, seed 004 "Triggering &
// Monitoring", DESIGN.md decision 17): a read-only web UI over a
// repository's .runner/ directory. It learns what changed by watching the
// files the runner writes (fsnotify, a trailing debounce:
// Options.Debounce) and pushes {kind, id} events over SSE (/events); the
// REST API (/api/*) carries the data. The runner does not know it is watched.
//
// Everything it serves is read under .runner/ through an os.Root, so no
// request reaches a path outside it, by ".." or by a symlink. Requests whose
// Host is not the address it listens on are refused (DNS rebinding); its one
// write, the cancel file with AllowCancel, needs a same-origin POST carrying
// the token of this start.
package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
)

// Options configure a Server.
type Options struct {
	// Root is the repository (absolute); the UI reads Root/.runner.
	Root string
	// NoAssets serves the API and /events only (000 §14.6 graceful
	// degradation); the page's paths answer 404.
	NoAssets bool
	// AllowCancel enables POST /api/cancel, which writes .runner/cancel
	// and nothing else. Off, the UI never writes.
	AllowCancel bool
	// AllowAnswer enables POST /api/answer, which runs TreeEdit answer
	// (DESIGN.md decision 17): the operator's answer to a waiting node,
	// committed, or queued while a runner works.
	AllowAnswer bool
	// TreeEdit is the tree-edit executable AllowAnswer runs (default:
	// tree-edit on PATH).
	TreeEdit string
	// Debounce is the quiet time before changes are announced
	// (default 100 ms); MaxDelay bounds how long a stream of changes (a
	// log being written) delays its event (default 250 ms).
	Debounce, MaxDelay time.Duration
	// Heartbeat is the SSE comment interval (default 15 s).
	Heartbeat time.Duration
	// Clock drives the debounce (default the real clock).
	Clock Clock
	// Logf reports watcher problems (default: discarded).
	Logf func(format string, args ...any)
	// Notify tells the operator, on the terminal the login token was
	// printed on, of a sign-in and of a refused sign-in or write
	// (default: discarded).
	Notify func(msg string)
}

// Server is one runner-ui instance.
type Server struct {
	opts   Options
	runner string // Root/.runner
	auth   auth
	hub    *Hub
	assets *assets
	iters  *iterCache
	tree   treeCache
	mux    *http.ServeMux

	mu    sync.Mutex
	hosts map[string]bool // Host headers accepted; nil until Serve or AllowHosts
	port  string          // the port listened on; "" until Serve or AllowHosts
}

// New builds a server for opts.Root. It does not start watching; Serve does.
func New(opts Options) (*Server, error) {
	if !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("root %q is not absolute", opts.Root)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.MaxDelay < opts.Debounce {
		opts.MaxDelay = 250 * time.Millisecond
		if opts.MaxDelay < opts.Debounce {
			opts.MaxDelay = opts.Debounce
		}
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Notify == nil {
		opts.Notify = func(string) {}
	}
	s := &Server{
		opts:   opts,
		runner: filepath.Join(opts.Root, layout.Runner),
		hub:    NewHub(ringSize, clientBuffer),
		iters:  newIterCache(),
	}
	if opts.AllowCancel || opts.AllowAnswer {
		token, err := newSecret()
		if err != nil {
			return nil, err
		}
		s.auth.token = token
	}
	if !opts.NoAssets {
		a, err := loadAssets()
		if err != nil {
			return nil, err
		}
		s.assets = a
	}
	s.routes()
	return s, nil
}

// Hub is the server's event hub.
func (s *Server) Hub() *Hub { return s.hub }

// AllowHosts sets the Host headers the server answers, from the address it
// listens on: "host:port", plus localhost, 127.0.0.1 and [::1] with that
// port when it is a loopback address. An unspecified address (0.0.0.0, ::)
// also accepts any IP literal with the port, never a DNS name other than
// localhost.
func (s *Server) AllowHosts(addr net.Addr) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return
	}
	m := map[string]bool{net.JoinHostPort(host, port): true}
	ip := net.ParseIP(host)
	if ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			m[net.JoinHostPort(h, port)] = true
		}
	}
	if ip != nil && ip.IsUnspecified() {
		m["ip-literal:"+port] = true
	}
	s.mu.Lock()
	s.hosts, s.port = m, port
	s.mu.Unlock()
}

// hostAllowed checks a request's Host header (DNS rebinding: a page on a
// hostile name that resolves to 127.0.0.1 sends its own name).
func (s *Server) hostAllowed(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts == nil {
		return false
	}
	h := strings.ToLower(host)
	if s.hosts[h] {
		return true
	}
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		return false
	}
	return s.hosts["ip-literal:"+port] && net.ParseIP(name) != nil
}

// Handler is the server's HTTP handler: the Host check, then the routes.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, "bad_host", "this server answers only its own address, not Host "+quoteHost(r.Host))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		s.mux.ServeHTTP(w, r)
	})
}

func quoteHost(h string) string {
	if len(h) > 80 {
		h = h[:80]
	}
	return fmt.Sprintf("%q", h)
}

// Serve watches .runner/ and serves HTTP on ln until ctx is done, then
// shuts down: open event streams are closed, requests in flight get a few
// seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.AllowHosts(ln.Addr())
	w, err := s.startWatch()
	if err != nil {
		return err
	}
	defer w.close()
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	srv.RegisterOnShutdown(s.hub.Close)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		s.hub.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// writeJSON writes v as JSON with status code, its strings without
// terminal escape sequences (cleanJSON).
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	data, _ := jsondoc.Compact(v)
	data = cleanJSON(data)
	_, _ = w.Write(append(data, '\n'))
}

// apiError is every error body: {"error": code, "message": …}.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, kind, message string) {
	writeJSON(w, code, apiError{Error: kind, Message: message})
}
