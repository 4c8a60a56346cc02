package httpapi

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection defaults: a header arrives in one round trip, a kept-alive
// connection is worth keeping for about a minute, Herald's own headers are
// a few hundred bytes (a user token at most 8 KiB), and each connection is
// a file descriptor and a goroutine.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerClient = 256
)

// ConnConfig bounds the connections of the http.Server that serves the
// API. Zero values take the defaults above; negative values do not limit.
type ConnConfig struct {
	// ReadHeaderTimeout: a request's line and headers must arrive within it.
	ReadHeaderTimeout time.Duration
	// IdleTimeout: a kept-alive connection with no request is closed after it.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's line and headers (431 beyond).
	MaxHeaderBytes int
	// MaxConns caps the open connections; one more is answered 503
	// unavailable and closed.
	MaxConns int
	// MaxConnsPerClient caps the open connections of one remote IP
	// address; one more is answered 429 rate_limited and closed. Behind a
	// proxy every client has the proxy's address: raise it or turn it off.
	MaxConnsPerClient int
	// TLS is the server's TLS configuration, nil for plain HTTP. Over TLS
	// a refused connection is closed without an answer (the answer would
	// have to come after a handshake the refusal exists to avoid).
	TLS *tls.Config
}

// NewHTTPServer validates c and returns the http.Server for h with c's
// timeouts and header limit, and ln wrapped to hold at most c's
// connections. Body and response deadlines are the Server's own, per
// request (Config.ReadTimeout, Config.WriteTimeout).
func NewHTTPServer(h http.Handler, ln net.Listener, c ConnConfig) (*http.Server, net.Listener, error) {
	if c.MaxHeaderBytes > 0 && c.MaxHeaderBytes < 4096 {
		return nil, nil, fmt.Errorf("httpapi: ConnConfig.MaxHeaderBytes %d is below 4096: ordinary requests would be refused", c.MaxHeaderBytes)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: orDefault(c.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(c.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    intOrDefault(c.MaxHeaderBytes, DefaultMaxHeaderBytes),
		TLSConfig:         c.TLS,
	}
	max, per := intOrDefault(c.MaxConns, DefaultMaxConns), intOrDefault(c.MaxConnsPerClient, DefaultMaxConnsPerClient)
	if max == 0 && per == 0 {
		return srv, ln, nil
	}
	return srv, &limitListener{Listener: ln, max: max, perClient: per, answer: c.TLS == nil, byAddr: map[string]int{}}, nil
}

func intOrDefault(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// maxRefusing bounds the refused connections being answered at once, so a
// flood of refusals holds few descriptors; beyond it they are just closed.
const maxRefusing = 64

// limitListener caps the open connections, in all and per remote address.
// golang.org/x/net/netutil.LimitListener is not a dependency and blocks
// Accept at the cap (new clients would hang in the backlog without a word);
// this one answers the refused connection and closes it.
type limitListener struct {
	net.Listener
	max, perClient int
	answer         bool

	mu       sync.Mutex
	open     int
	byAddr   map[string]int
	refusing int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c.RemoteAddr())
		if status, body := l.admit(host); status != 0 {
			l.refuse(c, status, body)
			continue
		}
		return &limitedConn{Conn: c, l: l, host: host}, nil
	}
}

// admit counts a new connection from host, or says why it is refused.
func (l *limitListener) admit(host string) (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.open >= l.max {
		return http.StatusServiceUnavailable, fmt.Sprintf(`{"code":"unavailable","message":"the server holds its maximum of %d connections; retry later"}`, l.max)
	}
	if l.perClient > 0 && l.byAddr[host] >= l.perClient {
		return http.StatusTooManyRequests, fmt.Sprintf(`{"code":"rate_limited","message":"too many connections from your address (the limit is %d); reuse connections"}`, l.perClient)
	}
	l.open++
	l.byAddr[host]++
	return 0, ""
}

func (l *limitListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[host]--; l.byAddr[host] <= 0 {
		delete(l.byAddr, host)
	}
}

// refuse answers c with status and body, without reading its request, and
// closes it; in the background, so Accept goes on at once.
func (l *limitListener) refuse(c net.Conn, status int, body string) {
	l.mu.Lock()
	ok := l.answer && l.refusing < maxRefusing
	if ok {
		l.refusing++
	}
	l.mu.Unlock()
	if !ok {
		c.Close()
		return
	}
	go func() {
		defer func() {
			c.Close()
			l.mu.Lock()
			l.refusing--
			l.mu.Unlock()
		}()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, err := fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
			status, http.StatusText(status), len(body)+1, body)
		if err != nil {
			return
		}
		// Close our side, then drain what the client sent, so closing does
		// not reset the connection before the client has read the answer.
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// limitedConn gives its slot back when closed (once: net/http may close
// a connection more than once).
type limitedConn struct {
	net.Conn
	l    *limitListener
	host string
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.release(c.host) })
	return c.Conn.Close()
}

func remoteHost(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
