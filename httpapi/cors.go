package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CORSConfig lets web pages of the listed origins call the API from the
// browser — subscribe to Web Push and register the subscription, read the
// inbox, open its stream (issue 21 item 6). Herald's credentials are bearer
// tokens, never cookies, so no credentialed CORS is needed and none is
// offered. An empty list allows no cross-origin calls (the default).
type CORSConfig struct {
	// AllowedOrigins are exact origins ("https://app.example.com"), or
	// "*" for any.
	AllowedOrigins []string
	// MaxAge is how long a browser may cache a preflight's answer.
	// Default DefaultCORSMaxAge.
	MaxAge time.Duration
}

// DefaultCORSMaxAge is how long a browser caches a preflight's answer.
const DefaultCORSMaxAge = 10 * time.Minute

// corsAllowHeaders are the request headers a page may send.
const corsAllowHeaders = "Authorization, Content-Type, Idempotency-Key, Last-Event-ID"

// corsExposeHeaders are the response headers a page may read.
const corsExposeHeaders = "Retry-After, X-Request-Id, Idempotent-Replayed"

// allowed reports whether origin may call the API.
func (c CORSConfig) allowed(origin string) bool {
	return origin != "" && (slices.Contains(c.AllowedOrigins, "*") || slices.Contains(c.AllowedOrigins, origin))
}

// cors answers a CORS preflight of an allowed origin (and reports it
// handled), or marks an allowed origin's actual request readable. A
// preflight carries no credentials, so it is answered before any
// authentication; the request it announces is then authenticated and
// authorized as every request is. A disallowed origin gets no CORS header:
// its browser refuses to hand the answer to the page.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if len(s.corsCfg.AllowedOrigins) == 0 {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	if !s.corsCfg.allowed(origin) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		maxAge := s.corsCfg.MaxAge
		if maxAge <= 0 {
			maxAge = DefaultCORSMaxAge
		}
		h.Set("Access-Control-Max-Age", strconv.Itoa(int(maxAge/time.Second)))
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	return false
}

// checkCORS refuses origins that cannot be one: a page's origin is a
// scheme and host with no path.
func checkCORS(c CORSConfig) error {
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			continue
		}
		if !(strings.HasPrefix(o, "https://") || strings.HasPrefix(o, "http://")) || strings.Count(o, "/") != 2 {
			return &originError{o}
		}
	}
	return nil
}

type originError struct{ origin string }

func (e *originError) Error() string {
	return "httpapi: CORS origin " + strconv.Quote(e.origin) + " is not an origin (scheme://host[:port], no path), or *"
}
