package httpapi

import "net/http"

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
}
