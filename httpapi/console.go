package httpapi

import (
	"net/http"
	"strconv"
)

// consoleAccess is the access rule of the operator console's mount: the
// API's guard does not run, because the console is not called with bearer
// credentials but signs its users in itself (package console: a session
// cookie, a CSRF token on every state change, and the same scope checks
// as the API routes its actions stand for). It is a rule of its own, not
// openAccess, so the route tests name it as the one exception instead of
// taking it for an open endpoint.
func consoleAccess() access { return access{console: true} }

// mountConsole routes /console/ and everything under it to the console,
// and /console to /console/. They go through ServeHTTP like any route, so
// they get a request id, the read and write deadlines, the store timeout
// and the access log line; the console writes HTML, not the API's JSON
// errors, including its own 404s.
func (s *Server) mountConsole(console http.Handler) {
	s.handle("GET /console", consoleAccess(), func(w http.ResponseWriter, r *http.Request) error {
		http.Redirect(w, r, "/console/", http.StatusMovedPermanently)
		return nil
	})
	s.handle("/console/", consoleAccess(), func(w http.ResponseWriter, r *http.Request) error {
		console.ServeHTTP(w, r)
		return nil
	})
	// A sign-in is an API key checked like a bearer credential, so it
	// shares the API's failed-authentication limit per client address
	// (rate_limit.failed_auth): an address out of failures is refused
	// before its key is looked up, and a refused key (401, or 403 for a
	// key that may not open the console) takes a failure.
	s.handle("POST /console/sign-in", consoleAccess(), func(w http.ResponseWriter, r *http.Request) error {
		addr := clientAddr(r)
		if blocked, wait := s.limits.failed.blocked(addr); blocked {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte("Too many refused sign-ins from this address: try again in " +
				strconv.Itoa(retryAfterSeconds(wait)) + " s.\n"))
			return nil
		}
		sw := &statusWriter{ResponseWriter: w}
		console.ServeHTTP(sw, r)
		if sw.status == http.StatusUnauthorized || sw.status == http.StatusForbidden {
			s.limits.failed.fail(addr)
		}
		return nil
	})
}
