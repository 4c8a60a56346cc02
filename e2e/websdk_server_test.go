package e2e

import (
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/internal/apitest"
	"github.com/heraldhq/herald/provider/webpush"
)

// sdkServer is what the web SDK's browser tests run against (issue 38
// item 4): a production `herald serve` (user tokens, CORS for the app's
// origin, Web Push to an emulator in the test process), reached by the
// browser through a proxy the test can cut, and the customer's app — a
// page on another origin that loads herald.js from Herald with its
// integrity hash, a token endpoint, and a service worker of its own.
type sdkServer struct {
	in     *instance
	api    *heraldclient.Client // admin key, every exchange held to the contract
	proxy  *cutProxy
	app    *httptest.Server
	em     *webpushemu.Emulator
	herald string // Herald's URL as the browser reaches it: through the proxy
	// tokenLife is how long the app's next user tokens live.
	tokenLife atomic.Int64
	// tokens counts the tokens the app's endpoint signed.
	tokens atomic.Int64
	secret []byte
}

const sdkTokenKID = "app1"

func startSDKServer(t *testing.T) *sdkServer {
	t.Helper()
	s := &sdkServer{secret: []byte(strings.Repeat("k", 32))}
	s.tokenLife.Store(int64(time.Hour))
	s.em = webpushemu.New(webpushemu.Config{})
	if _, err := s.em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.em.Close() })
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}

	// The app's origin is known before Herald starts: CORS names it.
	appLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	appOrigin := "http://" + appLn.Addr().String()
	cfg := filepath.Join(t.TempDir(), "herald.yaml")
	yaml := fmt.Sprintf(`http:
  cors_allowed_origins: [%q]
auth:
  user_tokens:
    leeway: 1s
    keys:
      %s: {alg: HS256, secret: %q}
webpush: {vapid_public_key: %q, vapid_private_key: %q, subject: "mailto:ops@example.com",
          allow_insecure_endpoints: true, allow_private_endpoints: true}
push_routing: {web: webpush}
`, appOrigin, sdkTokenKID, s.secret, pub, priv)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HERALD_CONFIG=" + cfg,
		"HERALD_DATABASE_URL=" + filepath.Join(t.TempDir(), "herald.db"),
		"HERALD_LOG__LEVEL=info",
	}
	admin, err := createKey(t, env, "sdk-admin", "admin")
	if err != nil {
		t.Fatal(err)
	}
	s.in = startInstance(t, env)
	s.api, err = heraldclient.New(s.in.api, heraldclient.WithAPIKey(admin),
		heraldclient.WithHTTPClient(&http.Client{Transport: apitest.Transport(t, nil), Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(s.in.api)
	if err != nil {
		t.Fatal(err)
	}
	s.proxy = startCutProxy(t, u.Host)
	s.herald = "http://" + s.proxy.addr()

	s.app = &httptest.Server{Listener: appLn, Config: &http.Server{Handler: s.appHandler(t)}}
	s.app.Start()
	t.Cleanup(s.app.Close)
	return s
}

// token signs a user token as the customer's backend would.
func (s *sdkServer) token(t *testing.T, user string, life time.Duration) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": user, "iat": now.Unix(), "exp": now.Add(life).Unix()})
	tok.Header["kid"] = sdkTokenKID
	signed, err := tok.SignedString(s.secret)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// appHandler is the customer's app: /inbox?user= is a page with the
// inbox, /token?user= its backend's token endpoint, /sw.js its service
// worker importing Herald's, /push-service/subscriptions the push
// service a stubbed PushManager subscribes at (the Web Push emulator).
func (s *sdkServer) appHandler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /token", func(w http.ResponseWriter, r *http.Request) {
		s.tokens.Add(1)
		_, _ = io.WriteString(w, s.token(t, r.URL.Query().Get("user"), time.Duration(s.tokenLife.Load())))
	})
	mux.HandleFunc("GET /inbox", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, s.page(t, r.URL.Query().Get("user"), r.URL.Query().Get("page_size"), r.URL.Query().Get("websocket") == "no"))
	})
	mux.HandleFunc("GET /sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = fmt.Fprintf(w, "importScripts(%q);\n%s", s.herald+"/sdk/v1/herald-sw.js", swTestHooks)
	})
	mux.HandleFunc("POST /push-service/subscriptions", func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Post(s.em.URL()+"/emulator/subscriptions", "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
	return mux
}

// swTestHooks let the test play the browser's part where a headless
// browser has no push service: hand a payload the emulator decrypted to
// Herald's push handling, click a shown notification (or one of its
// buttons), give the worker a configuration, and announce a changed
// subscription, each through Herald's own functions, answering
// on the message's port when done.
const swTestHooks = `self.addEventListener("message", (e) => {
  const d = e.data || {};
  let work = null;
  if (d.test === "push") work = self.herald.push(d.payload);
  if (d.test === "click") work = self.registration.getNotifications({tag: d.tag})
    .then((ns) => Promise.all(ns.map((n) => self.herald.click(n, d.action))));
  if (d.test === "config") work = self.herald.config(d.config);
  if (d.test === "subscription-changed") work = self.clients.matchAll({type: "window", includeUncontrolled: true})
    .then((cs) => cs.forEach((c) => c.postMessage({herald: "subscription-changed"})));
  if (work) e.waitUntil(work.then(() => e.ports[0] && e.ports[0].postMessage("done")));
});
`

// page is the app's page: herald.js from Herald's pinned path with its
// published integrity (a browser refuses other bytes), the element, and
// the page's token callback, which counts its calls. noWebSocket plays a
// browser without WebSocket, so the element takes Server-Sent Events.
func (s *sdkServer) page(t *testing.T, user, pageSize string, noWebSocket bool) string {
	sdk, err := s.api.SDKIntegrity(t.Context())
	if err != nil || len(sdk.Files) == 0 {
		t.Errorf("SDKIntegrity: %v", err)
		return ""
	}
	js := sdk.Files[0]
	if pageSize == "" {
		pageSize = "20"
	}
	q := html.EscapeString
	noWS := ""
	if noWebSocket {
		noWS = "<script>window.WebSocket = undefined;</script>\n"
	}
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>An app with Herald's inbox</title>
` + noWS + `<script type="module" src="` + q(s.herald+js.Path) + `" integrity="` + q(js.Integrity) + `" crossorigin="anonymous"></script>
</head><body><main><h1>An app</h1>
<herald-inbox server="` + q(s.herald) + `" user="` + q(user) + `" page-size="` + q(pageSize) + `"></herald-inbox>
</main>
<script type="module">
window.__tokens = 0;
const inbox = document.querySelector("herald-inbox");
inbox.getToken = async () => {
  window.__tokens++;
  const r = await fetch("/token?user=" + encodeURIComponent(` + "`" + q(user) + "`" + `));
  return r.text();
};
await customElements.whenDefined("herald-inbox");
window.__ready = true;
</script></body></html>`
}

// cutProxy forwards TCP connections to Herald until the test cuts it:
// then every open connection is closed and new ones are refused, as when
// a laptop loses its network, until the test restores it.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// cut closes every connection and refuses new ones until restore.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
