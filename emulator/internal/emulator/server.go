package emulator

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is the lifecycle every HTTP emulator shares: listen, serve in the
// background, report the reachable base URL, close. Its zero value is
// ready; an emulator embeds one per listener.
type Server struct {
	mu  sync.Mutex
	srv *http.Server
	url string
}

// Listen listens on addr (":0" picks a free port) and serves h on it
// through Serve; a listener that cannot be served is closed.
func (s *Server) Listen(name, addr string, h http.Handler, tlsConfig *tls.Config, tune func(*http.Server)) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	u, err := s.Serve(name, l, h, tlsConfig, tune)
	if err != nil {
		l.Close()
	}
	return u, err
}

// Serve serves h on l in the background until Close and returns the base
// URL: https with tlsConfig (HTTP/2 offered, as real providers speak it),
// http without. tune, if not nil, adjusts the http.Server before it starts.
func (s *Server) Serve(name string, l net.Listener, h http.Handler, tlsConfig *tls.Config, tune func(*http.Server)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return "", errors.New(name + " emulator: already serving")
	}
	hostPort, err := ReachableAddr(l.Addr())
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if tune != nil {
		tune(srv)
	}
	if tlsConfig != nil {
		srv.TLSConfig = tlsConfig.Clone()
		s.url = "https://" + hostPort
		go srv.ServeTLS(l, "", "") //nolint:errcheck // only returns ErrServerClosed after Close.
	} else {
		s.url = "http://" + hostPort
		go srv.Serve(l) //nolint:errcheck // only returns ErrServerClosed after Close.
	}
	s.srv = srv
	return s.url, nil
}

// URL is the base URL, "" before Serve.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// URLOr is URL, or fallback (an emulator's configured public URL) before
// Serve.
func (s *Server) URLOr(fallback string) string {
	if u := s.URL(); u != "" {
		return u
	}
	return fallback
}

// Close stops the server; closing twice (or before Serve) is a no-op.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}
