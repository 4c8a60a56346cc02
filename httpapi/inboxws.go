package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldhq/herald/heraldtype"
)

// The WebSocket close codes of the inbox stream, one per way the server
// ends it; the close reason is the same word as the SSE "close" event's
// reason. 4000–4999 are the application's own (RFC 6455 §7.4.2).
const (
	// WSCloseMaxLifetime: the stream reached http.stream_max_lifetime;
	// reconnect at once with ?last_event_id= and miss nothing.
	WSCloseMaxLifetime websocket.StatusCode = 4000
	// WSCloseCredentialsExpired: the user token expired; reconnect with a
	// new one.
	WSCloseCredentialsExpired websocket.StatusCode = 4001
	// WSCloseCredentialsRevoked: the API key was revoked; do not reconnect
	// with it.
	WSCloseCredentialsRevoked websocket.StatusCode = 4003
	// WSClosePingTimeout: the client did not answer a ping within
	// http.write_timeout; a live client reconnects with ?last_event_id=.
	WSClosePingTimeout websocket.StatusCode = 4008
)

// wsCloseCodes maps a streamEnd's reason to its close code.
var wsCloseCodes = map[string]websocket.StatusCode{
	"shutting_down":       websocket.StatusGoingAway,
	"max_lifetime":        WSCloseMaxLifetime,
	"credentials_expired": WSCloseCredentialsExpired,
	"credentials_revoked": WSCloseCredentialsRevoked,
}

// streamInboxWS: GET /v1/users/{id}/inbox/ws is the inbox stream over a
// WebSocket (S3.6): the same stream as the SSE one (inboxstream.go), with
// each event a JSON text message {"event":"inbox","id":<item id>,"data":
// <item>}, the user's counts {"event":"state","data":{"unread","unseen"}}
// (issue 35 item 1) and, when the server ends the stream, a last message
// {"event":"close","data":{"reason","message"}} before a close frame with
// the code above and the reason. It resumes after ?last_event_id=<id> (or
// the Last-Event-ID header, or ?after=). Pings keep it open and find a
// client that is gone (Client's InboxHeartbeat; the pong must come within
// the write timeout). The client sends nothing: a data message closes the
// stream with 1008 (policy violation). A store failure closes it with 1011.
//
// A browser cannot set headers on a WebSocket, so it authenticates with
// ?access_token=<user token>, as for EventSource; a page's Origin must be
// this server's own or one of CORSConfig.AllowedOrigins.
func (s *Server) streamInboxWS(w http.ResponseWriter, r *http.Request) error {
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		return heraldtype.FieldErrorf("Upgrade", "this endpoint is a WebSocket: open it with a WebSocket client (Upgrade: websocket), or use GET /v1/users/{id}/inbox/stream for Server-Sent Events")
	}
	// Checked here, as the library checks it again in Accept, so that the
	// refusal is Herald's JSON error rather than the library's text.
	if origin := r.Header.Get("Origin"); origin != "" && !s.wsOriginAllowed(r, origin) {
		return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "a WebSocket from origin %q is not allowed: it is not this server's origin nor in http.cors_allowed_origins", origin)
	}
	return s.runInboxStream(r, &wsFraming{w: w, r: r, writeTimeout: s.writeTimeout,
		opts: &websocket.AcceptOptions{OriginPatterns: s.corsCfg.AllowedOrigins}})
}

// wsOriginAllowed reports whether a page of origin may open a WebSocket:
// its own origin (the Host it asks), or an allowed CORS origin.
func (s *Server) wsOriginAllowed(r *http.Request, origin string) bool {
	if _, host, ok := strings.Cut(origin, "://"); ok && strings.EqualFold(host, r.Host) {
		return true
	}
	return s.corsCfg.allowed(origin)
}

// headerHasToken reports whether a comma-separated header lists token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// wsMessage is one message of the stream: an SSE event as JSON.
type wsMessage struct {
	Event string `json:"event"`
	ID    int64  `json:"id,omitempty"`
	Data  any    `json:"data"`
}

// wsFraming writes the inbox stream as WebSocket messages.
type wsFraming struct {
	w            http.ResponseWriter
	r            *http.Request
	opts         *websocket.AcceptOptions
	writeTimeout time.Duration

	conn        *websocket.Conn
	pingTimeout bool
	buf         bytes.Buffer
}

var _ inboxFraming = (*wsFraming)(nil)

// start upgrades the connection. The stream's context ends with ctx or
// when the connection does (the client closed it, or sent a message).
// exempt lifts the request's deadlines (setDeadlines), which a hijacked
// connection would keep; the stream bounds each write itself.
func (f *wsFraming) exempt() {
	rc := http.NewResponseController(f.w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

func (f *wsFraming) start(ctx context.Context) (context.Context, error) {
	f.exempt()
	c, err := websocket.Accept(f.w, f.r, f.opts)
	if err != nil {
		return nil, err
	}
	f.conn = c
	// The reader answers pings and the close handshake, and takes pongs.
	// It must outlive ctx: a cancelled read context closes the connection
	// at once, before the close frame that says why the stream ended.
	read := c.CloseRead(context.WithoutCancel(ctx))
	sctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(read, cancel)
	return sctx, nil
}

// writeCtx bounds one write, apart from the stream's context: a write cut
// by the end of the stream would close the connection without a word.
func (f *wsFraming) writeCtx() (context.Context, context.CancelFunc) {
	if f.writeTimeout > 0 {
		return context.WithTimeout(context.Background(), f.writeTimeout)
	}
	return context.Background(), func() {}
}

func (f *wsFraming) send(m wsMessage) error {
	f.buf.Reset()
	if err := json.NewEncoder(&f.buf).Encode(m); err != nil {
		return err
	}
	ctx, cancel := f.writeCtx()
	defer cancel()
	if err := f.conn.Write(ctx, websocket.MessageText, bytes.TrimSuffix(f.buf.Bytes(), []byte("\n"))); err != nil {
		return &clientGone{err}
	}
	return nil
}

func (f *wsFraming) item(it heraldtype.InboxItem) error {
	return f.send(wsMessage{Event: "inbox", ID: it.ID, Data: it})
}

// state sends the counts as {"event":"state","data":{"unread","unseen"}},
// without an id.
func (f *wsFraming) state(st heraldtype.InboxState) error {
	return f.send(wsMessage{Event: "state", Data: st})
}

// heartbeat pings and waits for the pong: unlike an SSE comment, which a
// dead peer's kernel buffer takes for minutes, it finds a client that is
// gone within the write timeout.
func (f *wsFraming) heartbeat() error {
	ctx, cancel := f.writeCtx()
	defer cancel()
	if err := f.conn.Ping(ctx); err != nil {
		f.pingTimeout = ctx.Err() != nil
		return &clientGone{err}
	}
	return nil
}

// finish says why the stream ended, with a close code for each reason.
func (f *wsFraming) finish(end *streamEnd, err error) {
	switch {
	case end != nil:
		code, ok := wsCloseCodes[end.Reason]
		if !ok {
			code = websocket.StatusGoingAway
		}
		_ = f.send(wsMessage{Event: "close", Data: end})
		_ = f.conn.Close(code, end.Reason)
	case f.pingTimeout:
		_ = f.conn.Close(WSClosePingTimeout, "ping_timeout")
	case err != nil:
		_ = f.conn.Close(websocket.StatusInternalError, heraldtype.EINTERNAL)
	default:
		// The client closed the connection (the reader answered its close
		// frame) or it broke.
		_ = f.conn.CloseNow()
	}
}
