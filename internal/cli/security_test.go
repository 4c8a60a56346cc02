package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
)

// server is a non-dev `herald serve` run in-process.
type server struct {
	api  string
	logs *syncBuffer
	stop func() int
}

// startServe runs `herald serve` (not --dev) with env and waits for it to
// listen.
func startServe(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	all := append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)
	go func() { done <- Run(ctx, all, io.Discard, logs, env) }()
	s := &server{logs: logs}
	var once sync.Once
	code := 0
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop within 30 s")
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	waitFor(t, "the server to listen", func() bool {
		select {
		case c := <-done:
			t.Fatalf("serve exited with %d: %s", c, logs.String())
		default:
		}
		s.api = logs.logValue("herald listening", "addr")
		return s.api != ""
	})
	return s
}

func run(args []string, env []string) (string, int) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb, env)
	return out.String() + errb.String(), code
}

// Without a key, serve refuses and says what to run; --dev refuses a
// non-loopback address.
func TestServeRefusesWithoutKey(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	out, code := run([]string{"serve", "--listen", "127.0.0.1:0", "--database", db}, nil)
	if code == 0 || !strings.Contains(out, "herald keys create --name admin --scope admin --database "+db) || !strings.Contains(out, "HERALD_BOOTSTRAP_API_KEY") {
		t.Fatalf("serve without a key: %d\n%s", code, out)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		out, code := run([]string{"serve", "--dev", "--listen", addr, "--database", db}, nil)
		if code == 0 || !strings.Contains(out, "loopback") {
			t.Errorf("--dev --listen %s: %d %s", addr, code, out)
		}
	}
	if _, code := run([]string{"serve", "--listen", "127.0.0.1:0", "--database", db}, []string{"HERALD_BOOTSTRAP_API_KEY=short"}); code == 0 {
		t.Error("a short bootstrap key was accepted")
	}
}

// keys create → the key works against serve; list shows it without the
// secret; revoke ends it.
func TestKeysCommands(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	out, code := run([]string{"keys", "create", "--name", "ci", "--scope", "users:write,users:read", "--database", db}, nil)
	if code != 0 {
		t.Fatalf("keys create: %d %s", code, out)
	}
	var id, key string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "id:"); ok {
			id = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "key:"); ok {
			key = strings.TrimSpace(v)
		}
	}
	if id == "" || !strings.HasPrefix(key, "hk_"+id+"_") {
		t.Fatalf("keys create printed %q", out)
	}
	if out, code := run([]string{"keys", "create", "--name", "x", "--scope", "nope", "--database", db}, nil); code == 0 || !strings.Contains(out, "unknown scope") {
		t.Fatalf("unknown scope: %d %s", code, out)
	}
	out, code = run([]string{"keys", "list", "--database", db}, nil)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "users:read,users:write") || strings.Contains(out, key[20:]) {
		t.Fatalf("keys list: %d %s", code, out)
	}

	s := startServe(t, nil, "--database", db)
	if c, _ := call(t, "PUT", s.api+"/v1/users/u1", `{}`); c != 401 {
		t.Fatalf("no key: %d", c)
	}
	if c, _ := call(t, "PUT", s.api+"/v1/users/u1", `{}`, "Authorization", "Bearer "+key); c != 200 {
		t.Fatalf("with the key: %d", c)
	}
	if c, _ := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"t","title":"x"}`, "Authorization", "Bearer "+key); c != 403 {
		t.Fatalf("without the scope: %d", c)
	}
	if c, _ := call(t, "GET", s.api+"/metrics", ""); c != 401 {
		t.Fatalf("/metrics without a key: %d", c)
	}
	if c, _ := call(t, "GET", s.api+"/healthz", ""); c != 200 {
		t.Fatalf("/healthz: %d", c)
	}
	// The operator commands take --api-key.
	if out, code := run([]string{"send", "--server", s.api, "--user", "u1", "--type", "t", "--title", "x"}, nil); code == 0 || !strings.Contains(out, "unauthenticated") {
		t.Fatalf("send without a key: %d %s", code, out)
	}
	if out, code := run([]string{"send", "--server", s.api, "--user", "u1", "--type", "t", "--title", "x"}, []string{"HERALD_API_KEY=" + key}); code == 0 || !strings.Contains(out, "permission_denied") {
		t.Fatalf("send with a key lacking the scope: %d %s", code, out)
	}
	s.stop()

	if out, code := run([]string{"keys", "revoke", id, "--database", db}, nil); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("keys revoke: %d %s", code, out)
	}
	// The only key is revoked: serve refuses again.
	if out, code := run([]string{"serve", "--listen", "127.0.0.1:0", "--database", db}, nil); code == 0 || !strings.Contains(out, "no API key") {
		t.Fatalf("serve after revoking the only key: %d %s", code, out)
	}
}

// Secrets given by configuration — the bootstrap API key, a user token
// signing secret, provider credentials — never show up in logs or
// responses, whatever is sent.
func TestSecretsStayOutOfLogsAndResponses(t *testing.T) {
	t.Parallel()
	em := fcmemu.New(fcmemu.Config{})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	creds := string(em.ServiceAccountJSON("p1"))
	boot := "bootstrap-" + strings.Repeat("7f3a", 10)
	signing := "user-token-signing-secret-" + strings.Repeat("q", 20)
	secretFile := filepath.Join(t.TempDir(), "boot")
	if err := os.WriteFile(secretFile, []byte(boot+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HERALD_AUTH__BOOTSTRAP_KEY_FILE=" + secretFile,
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__ALG=HS256",
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__SECRET=" + signing,
		"HERALD_FCM__CREDENTIALS_JSON=" + creds,
		"HERALD_FCM__ENDPOINT=" + em.URL(),
		"HERALD_LOG__LEVEL=debug",
	}
	s := startServe(t, env, "--database", filepath.Join(t.TempDir(), "h.db"))
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u1", "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "app1"
	userTok, err := tok.SignedString([]byte(signing))
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	req := func(method, path, body string, hdr ...string) int {
		r, _ := http.NewRequest(method, s.api+path, strings.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		bodies = append(bodies, string(b))
		return resp.StatusCode
	}
	if c := req("PUT", "/v1/users/u1", "{}", "Authorization", "Bearer "+boot); c != 200 {
		t.Fatalf("bootstrap key from a file: %d", c)
	}
	if c := req("POST", "/v1/tokens", `{"device_id":"d1","token":"tok-1","platform":"android"}`, "Authorization", "Bearer "+userTok); c != 200 {
		t.Fatalf("user token: %d %s", c, bodies[len(bodies)-1])
	}
	req("GET", "/v1/users/u1", "", "Authorization", "Bearer "+boot+"x")
	req("GET", "/v1/users/u1", "", "Authorization", "Bearer "+userTok+"x")
	req("GET", "/v1/users/u2/devices", "", "Authorization", "Bearer "+userTok)
	req("GET", "/metrics", "", "Authorization", "Bearer "+boot)
	req("POST", "/v1/notifications", `{"user_id":"u1","type":"t","title":"x"}`, "Authorization", "Bearer "+boot)
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	everything := s.logs.String() + strings.Join(bodies, "\n")
	for name, secret := range map[string]string{
		"bootstrap key": boot, "signing secret": signing, "user token": userTok[len(userTok)-30:],
		"FCM private key": "PRIVATE KEY", "FCM key id": "private_key_id\":",
	} {
		if strings.Contains(everything, secret) {
			t.Errorf("the %s appears in logs or responses", name)
		}
	}
	if !strings.Contains(s.logs.String(), `"user_tokens":true`) || !strings.Contains(s.logs.String(), `"bootstrap_key":true`) {
		t.Errorf("start-up log does not say what is configured:\n%s", s.logs.String())
	}
}

// serve --tls-cert --tls-key serves HTTPS with the given certificate.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	boot := strings.Repeat("b", 40)
	s := startServe(t, []string{"HERALD_BOOTSTRAP_API_KEY=" + boot}, "--database", filepath.Join(dir, "h.db"),
		"--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(s.api, "https://") {
		t.Fatalf("listening on %s", s.api)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	r, _ := http.NewRequest("PUT", s.api+"/v1/users/u1", strings.NewReader("{}"))
	r.Header.Set("Authorization", "Bearer "+boot)
	resp, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("HTTPS request: %d", resp.StatusCode)
	}
	// Plain HTTP to the TLS port is refused.
	if resp, err := http.Get(strings.Replace(s.api, "https://", "http://", 1) + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
	if out, code := run([]string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--database", filepath.Join(dir, "h.db")},
		[]string{"HERALD_BOOTSTRAP_API_KEY=" + boot}); code == 0 || !strings.Contains(out, "--tls-key") {
		t.Fatalf("--tls-cert alone: %d %s", code, out)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "herald-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// Auth settings come from the file and the environment; a secret's value
// never appears in a configuration error.
func TestAuthConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "app2.secret")
	if err := os.WriteFile(secretFile, []byte(strings.Repeat("s", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "herald.yaml")
	yaml := "auth:\n  metrics_auth: false\n  user_tokens:\n    issuer: shop\n    keys:\n      app2: {alg: hs256, secret_file: " + secretFile + "}\nrate_limit:\n  user: {per_second: 1, burst: 2}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path, []string{
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__ALG=HS256",
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__SECRET=" + strings.Repeat("e", 32),
		"HERALD_BOOTSTRAP_API_KEY=" + strings.Repeat("k", 32),
		"HERALD_API_KEY=not-a-server-setting",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.MetricsAuth || cfg.Auth.BootstrapKey != strings.Repeat("k", 32) || cfg.RateLimit.User.Burst != 2 || cfg.RateLimit.APIKey.PerSecond != 500 {
		t.Fatalf("config = %+v %+v", cfg.Auth, cfg.RateLimit)
	}
	// Issue 23 item 8: the negative key cache and the failed-auth limit
	// are on by default.
	if cfg.Auth.NegativeCacheTTL != 5*time.Second || cfg.Auth.NegativeCacheSize != 10000 ||
		cfg.RateLimit.FailedAuth != (RateConfig{PerSecond: 1, Burst: 30}) || cfg.RateLimit.FailedAuthClients != 10000 {
		t.Fatalf("defaults: %+v %+v", cfg.Auth, cfg.RateLimit)
	}
	v, err := cfg.Auth.UserTokens.userTokens()
	if err != nil || v == nil {
		t.Fatalf("user tokens: %v", err)
	}
	leak := "leaky-" + strings.Repeat("z", 10)
	for name, k := range map[string]UserTokenKeyConfig{
		"both":    {Alg: "HS256", Secret: leak, SecretFile: secretFile},
		"short":   {Alg: "HS256", Secret: leak},
		"bad pem": {Alg: "ES256", PublicKeyPEM: leak},
		"bad alg": {Alg: "none", Secret: leak + strings.Repeat("x", 32)},
		"no file": {Alg: "HS256", SecretFile: filepath.Join(dir, "missing")},
	} {
		c := UserTokensConfig{Keys: map[string]UserTokenKeyConfig{"k": k}}
		if _, err := c.userTokens(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), leak) {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}
