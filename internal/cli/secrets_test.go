package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/provider/webpush"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// A full run on PostgreSQL with a known secret in every credential Herald
// takes — the DSN's password in its userinfo and in its query, every
// provider's key or token, the bootstrap API key, the user-token signing
// secret, a Redis password — and then runs that fail (an unreachable
// database, an unparsable URL, an unreachable Redis) so that connection
// errors are printed: no secret may appear anywhere in what Herald writes
// (issue 18).
func TestSecretsStayOutOfAFullRun(t *testing.T) {
	t.Parallel()
	base, schema := pgtest.NewSchema(t)
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Skipf("the test database %q is not a URL", base)
	}
	const (
		userinfoPW = "userinfo-pw-Zq81"
		queryPW    = "query-pw-Wk52"
		redisPW    = "redis-pw-Hn07"
		twilioTok  = "twilio-auth-token-Rt66"
		smtpPW     = "smtp-password-Ms39"
	)
	// Trust authentication on the test server ignores the passwords, so
	// the run works while the DSN carries both.
	u.User = url.UserPassword(u.User.Username(), userinfoPW)
	q := u.Query()
	q.Set("password", queryPW)
	u.RawQuery = q.Encode()
	dsn := u.String()

	em := fcmemu.New(fcmemu.Config{})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	fcmJSON := string(em.ServiceAccountJSON("p1"))
	fcmKey := pemBody(t, fcmJSON)
	dir := t.TempDir()
	apnsPEM := p8Key(t)
	apnsFile := filepath.Join(dir, "AuthKey.p8")
	if err := os.WriteFile(apnsFile, []byte(apnsPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	vapidPub, vapidPriv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	boot := "bootstrap-" + strings.Repeat("5e1d", 10)
	signing := "user-token-signing-secret-" + strings.Repeat("v", 20)
	secrets := map[string]string{
		"DSN userinfo password": userinfoPW, "DSN query password": queryPW, "Redis password": redisPW,
		"FCM private key": fcmKey, "APNs .p8 key": pemBody(t, apnsPEM), "VAPID private key": vapidPriv,
		"Twilio auth token": twilioTok, "SMTP password": smtpPW, "bootstrap key": boot, "signing secret": signing,
	}
	env := []string{
		"HERALD_DATABASE_URL=" + dsn,
		"HERALD_DATABASE_SCHEMA=" + schema,
		"HERALD_AUTH__BOOTSTRAP_KEY=" + boot,
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__ALG=HS256",
		"HERALD_AUTH__USER_TOKENS__KEYS__APP1__SECRET=" + signing,
		"HERALD_FCM__CREDENTIALS_JSON=" + fcmJSON,
		"HERALD_FCM__ENDPOINT=" + em.URL(),
		"HERALD_APNS__KEY_FILE=" + apnsFile,
		"HERALD_APNS__KEY_ID=ABC123DEFG",
		"HERALD_APNS__TEAM_ID=TEAM123456",
		"HERALD_APNS__TOPIC=com.example.app",
		"HERALD_APNS__ENDPOINT=https://127.0.0.1:1",
		"HERALD_WEBPUSH__VAPID_PUBLIC_KEY=" + vapidPub,
		"HERALD_WEBPUSH__VAPID_PRIVATE_KEY=" + vapidPriv,
		"HERALD_WEBPUSH__SUBJECT=mailto:ops@example.com",
		"HERALD_TWILIO__ACCOUNT_SID=AC0123456789abcdef0123456789abcdef",
		"HERALD_TWILIO__AUTH_TOKEN=" + twilioTok,
		"HERALD_TWILIO__FROM=+15550100",
		"HERALD_TWILIO__BASE_URL=http://127.0.0.1:1",
		"HERALD_SMTP__HOST=127.0.0.1",
		"HERALD_SMTP__PORT=1",
		"HERALD_SMTP__USERNAME=herald",
		"HERALD_SMTP__PASSWORD=" + smtpPW,
		"HERALD_SMTP__TLS=none",
		"HERALD_SMTP__FROM=no-reply@example.com",
		"HERALD_LOG__LEVEL=debug",
	}
	var out strings.Builder
	s := startServe(t, env)
	req := func(method, path, body, key string) {
		r, _ := http.NewRequest(method, s.api+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out.Write(b)
	}
	req("PUT", "/v1/users/u1", `{"email":"u1@example.com","phone":"+15550101"}`, boot)
	req("POST", "/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android"}`, boot)
	req("POST", "/v1/notifications", `{"user_id":"u1","type":"t","title":"x","channels":["push","email","sms"]}`, boot)
	req("GET", "/v1/users/u1", "", boot+"x")
	req("GET", "/v1/users/u1/inbox/stream?access_token="+boot, "", "")
	// A rotation (issue 21 item 7) names the key, never the old or the
	// new one.
	rotatedPEM := p8Key(t)
	secrets["rotated APNs .p8 key"] = pemBody(t, rotatedPEM)
	writeAtomically(t, apnsFile, rotatedPEM)
	hup(t)
	waitFor(t, "the APNs key rotation", func() bool { return len(s.logs.logLines("provider credentials rotated")) > 0 })
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d: %s", code, s.logs.String())
	}
	out.WriteString(s.logs.String())

	// Runs that fail while opening what the secrets guard, so the errors
	// that wrap a connection failure are printed too.
	withEnv := func(kv ...string) []string { return append(append([]string(nil), env...), kv...) }
	unreachable := strings.Replace(dsn, u.Host, "127.0.0.1:1", 1)
	for name, c := range map[string]struct {
		args []string
		env  []string
	}{
		"serve, database down":     {[]string{"serve", "--listen", "127.0.0.1:0"}, withEnv("HERALD_DATABASE_URL=" + unreachable)},
		"serve, unparsable URL":    {[]string{"serve", "--listen", "127.0.0.1:0"}, withEnv("HERALD_DATABASE_URL=postgres://u:" + userinfoPW + "%zz@127.0.0.1:1/db?password=" + queryPW)},
		"serve, Redis down":        {[]string{"serve", "--listen", "127.0.0.1:0", "--policy-store", "redis://:" + redisPW + "@127.0.0.1:1/0"}, env},
		"migrate, database down":   {[]string{"migrate"}, withEnv("HERALD_DATABASE_URL=" + unreachable)},
		"keys list, database down": {[]string{"keys", "list", "--database", unreachable}, env},
		"migrate, working":         {[]string{"migrate"}, env},
	} {
		text, code := run(c.args, c.env)
		if code == 0 && name != "migrate, working" {
			t.Errorf("%s: exit 0: %s", name, text)
		}
		out.WriteString(text)
		for what, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s prints the %s:\n%s", name, what, text)
			}
		}
	}
	all := out.String()
	for what, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("the %s appears in Herald's output", what)
		}
	}
	if !strings.Contains(all, "xxxxx") {
		t.Errorf("no masked DSN was printed at all, so the test proves nothing:\n%s", all)
	}
}

// pemBody returns a distinctive piece of the base64 body of the first PEM
// block in s (which may be JSON-escaped).
func pemBody(t *testing.T, s string) string {
	t.Helper()
	s = strings.ReplaceAll(s, `\n`, "\n")
	_, rest, ok := strings.Cut(s, "PRIVATE KEY-----\n")
	if !ok || len(rest) < 60 {
		t.Fatalf("no PEM private key in %.40q…", s)
	}
	return rest[10:50]
}

// p8Key is an APNs token signing key as Apple issues it: a PKCS #8 P-256
// key in PEM.
func p8Key(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}
