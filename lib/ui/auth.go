package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Who may write (DESIGN.md decision 17). Reading is open to whoever can
// reach the address (loopback by default); the writes, a cancel and an
// answer, are the operator's, never a session's, whatever its sandbox and
// its network:
//
//   - A server that allows a write makes a one-time login token at start
//     (LoginToken), which runner-ui prints on the terminal it runs in
//     only, as Jupyter does, never on stdout, in a file or in an answer.
//   - GET /login?token=T exchanges it, once, for a session cookie
//     (HttpOnly, SameSite=Strict, host-only, named for the port), which no
//     page script can read and no endpoint returns. The token is then
//     spent: another sign-in needs a restart, and the operator who finds
//     their link spent learns that someone else used it.
//   - A write is a POST from this server's own page (Origin, Sec-Fetch-Site)
//     carrying the cookie, and sent by no process of a running session
//     (peerRefusal); the exchange is refused to a session too, without
//     spending the token. Each sign-in, and each one refused, is told on
//     the terminal (Options.Notify).

// auth is a server's sign-in state.
type auth struct {
	mu      sync.Mutex
	token   string    // the one-time login token; "" when nothing may be written
	used    time.Time // when the token was exchanged; zero while it stands
	session string    // the cookie's value once the token is exchanged
}

// newSecret is 16 random bytes in hex.
func newSecret() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// LoginToken is the one-time token that signs a browser in (GET
// /login?token=…), "" when the server allows no write. Give it to the
// operator only, on their terminal.
func (s *Server) LoginToken() string { return s.auth.token }

// cookieName is the session cookie's name: cookies are not kept apart by
// port, so two servers on one host each have their own.
func (s *Server) cookieName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.port == "" {
		return "treeloop-ui"
	}
	return "treeloop-ui-" + s.port
}

// signedIn reports whether r carries this server's session cookie.
func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return false
	}
	s.auth.mu.Lock()
	session := s.auth.session
	s.auth.mu.Unlock()
	return session != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(session)) == 1
}

// handleLogin is GET /login?token=T: the operator's browser, opening the
// link runner-ui printed, exchanges the one-time token for the session
// cookie and goes on to the page. Its answers are text, for a person.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	text := func(code int, msg string) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		fmt.Fprintln(w, msg)
	}
	a := &s.auth
	if r.Method != http.MethodGet { // HEAD: a link checker's, not a browser's
		w.Header().Set("Allow", http.MethodGet)
		text(http.StatusMethodNotAllowed, "runner-ui: open the login link in a browser")
		return
	}
	if a.token == "" {
		text(http.StatusNotFound, "runner-ui: this runner-ui writes nothing (no --allow-cancel, no --allow-answer): there is nothing to sign in to")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(a.token)) != 1 {
		text(http.StatusForbidden, "runner-ui: not this runner-ui's login link (a new one is printed at every start, on its terminal)")
		return
	}
	a.mu.Lock()
	used := a.used
	a.mu.Unlock()
	if !used.IsZero() {
		text(http.StatusGone, "runner-ui: this login link was used at "+used.Format("15:04:05")+" and works once. If you did not use it, someone else did: stop runner-ui (its session ends with it) and find out who. To sign in again, restart runner-ui and open the new link it prints.")
		return
	}
	if why := peerRefusal(r); why != "" {
		s.opts.Notify("refused a sign-in with the login link from " + r.RemoteAddr + ": " + why + "; the link still stands")
		text(http.StatusForbidden, "runner-ui: sign-in refused: "+why)
		return
	}
	session, err := newSecret()
	if err != nil {
		text(http.StatusInternalServerError, "runner-ui: "+err.Error())
		return
	}
	a.mu.Lock()
	if !a.used.IsZero() { // exchanged meanwhile
		a.mu.Unlock()
		text(http.StatusGone, "runner-ui: this login link was used already and works once: restart runner-ui for a new one")
		return
	}
	a.used, a.session = time.Now(), session
	a.mu.Unlock()
	s.opts.Notify("signed in with the login link from " + r.RemoteAddr + " at " + time.Now().Format("15:04:05") + "; the link is spent (to sign in another browser, restart runner-ui)")
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// ownPage checks that a write (what: "a cancel", "an answer") is the
// operator's: a POST from this server's own page (same Origin, a
// same-origin fetch), signed in (the session cookie), and sent by no
// process of a running session. It answers a refusal itself: 403, or 401
// when only the sign-in is missing.
func (s *Server) ownPage(w http.ResponseWriter, r *http.Request, what string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || origin != "http://"+r.Host {
		writeError(w, http.StatusForbidden, "bad_origin", what+" must come from this server's own page (Origin "+quoteHost(origin)+")")
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		writeError(w, http.StatusForbidden, "bad_origin", what+" must come from this server's own page (Sec-Fetch-Site "+quoteHost(site)+")")
		return false
	}
	if !s.signedIn(r) {
		writeError(w, http.StatusUnauthorized, "sign_in", what+" needs a signed-in browser: open the one-time login link runner-ui printed on its terminal (restart it for a new one)")
		return false
	}
	if why := peerRefusal(r); why != "" {
		s.opts.Notify("refused " + what + " from " + r.RemoteAddr + ": " + why)
		writeError(w, http.StatusForbidden, "session", what+" refused: "+why)
		return false
	}
	return true
}
