package httpapi

// RouteRule is a route's access rule, for the tests in package
// httpapi_test that walk every route.
type RouteRule struct {
	Open, Self, UserOnly bool
	// User: any user token, or a key with Scope (the app's receipts).
	User bool
	// Console is the console's mount: no API operation, its own sign-in.
	Console bool
	Scope   string
}

// Rules returns every registered route's rule by pattern.
func Rules(s *Server) map[string]RouteRule {
	out := map[string]RouteRule{}
	for p, a := range s.rules {
		out[p] = RouteRule{Open: a.open, Self: a.self, User: a.user, UserOnly: a.userOnly, Console: a.console, Scope: string(a.scope)}
	}
	return out
}
