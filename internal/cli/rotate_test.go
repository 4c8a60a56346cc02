package cli

import (
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/heraldhq/herald"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/provider/apns"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/provider/twilio"
)

// writeAtomically replaces path's content the way a secret manager does
// (a new file renamed over the old), so a reload never reads half a file.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// hup sends this process a SIGHUP: every serve running in the test binary
// reloads (those of other tests find nothing changed).
func hup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// A SIGHUP moves a running serve to a second FCM project's service account;
// the first account is then deleted at the emulator, and sends before and
// after both reach the emulator, each with its own project. A credentials
// file that no longer parses is refused and the second account stays.
// The rotation is logged by account, never with the key.
func TestSIGHUPRotatesFCMCredentials(t *testing.T) {
	t.Parallel()
	em := fcmemu.New(fcmemu.Config{})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	dir := t.TempDir()
	credFile := filepath.Join(dir, "fcm.json")
	first := string(em.ServiceAccountJSON("p1"))
	writeAtomically(t, credFile, first)
	boot := "bootstrap-" + strings.Repeat("9c2b", 10)
	s := startServe(t, []string{"HERALD_AUTH__BOOTSTRAP_KEY=" + boot, "HERALD_FCM__CREDENTIALS_FILE=" + credFile,
		"HERALD_FCM__ENDPOINT=" + em.URL()}, "--database", filepath.Join(dir, "h.db"))
	auth := []string{"Authorization", "Bearer " + boot}
	if c, _ := call(t, "PUT", s.api+"/v1/users/u1", "{}", auth...); c != 200 {
		t.Fatalf("PUT user: %d", c)
	}
	if c, _ := call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android"}`, auth...); c != 200 && c != 201 {
		t.Fatalf("POST device: %d", c)
	}
	send := func(n int, project string) {
		t.Helper()
		if c, body := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"t","title":"x"}`, auth...); c != 202 {
			t.Fatalf("trigger: %d %v", c, body)
		}
		waitFor(t, "the push at the emulator", func() bool { return len(em.Messages()) >= n })
		if got := em.Messages()[n-1].Project; got != project {
			t.Fatalf("push %d was sent for project %q, want %q", n, got, project)
		}
	}
	send(1, "p1")

	second := string(em.ServiceAccountJSON("p2"))
	writeAtomically(t, credFile, second)
	hup(t)
	waitFor(t, "the rotation", func() bool { return len(s.logs.logLines("provider credentials rotated")) > 0 })
	em.DeleteServiceAccount("p1") // the old key is revoked: only the new one can work now
	send(2, "p2")

	writeAtomically(t, credFile, `{"type": "service_account", "private_key": "`) // a botched edit
	hup(t)
	waitFor(t, "the refusal", func() bool {
		return len(s.logs.logLines("reload refused: the running providers keep their credentials")) > 0
	})
	send(3, "p2")
	if st := em.Stats(); st.Rejected["UNAUTHENTICATED"] != 0 {
		t.Errorf("a send used revoked credentials: %+v", st)
	}

	line := s.logs.logLines("provider credentials rotated")[0]
	cur, _ := line["credentials"].(map[string]any)
	prev, _ := line["previous"].(map[string]any)
	if line["provider"] != "fcm" || cur["client_email"] != "herald-emulator@p2.iam.gserviceaccount.com" ||
		cur["project_id"] != "p2" || prev["project_id"] != "p1" || cur["private_key_id"] == "" {
		t.Errorf("rotation log line %v", line)
	}
	refused := s.logs.logLines("reload refused: the running providers keep their credentials")[0]
	if msg, _ := refused["err"].(string); !strings.Contains(msg, "fcm") {
		t.Errorf("the refusal does not name the provider: %v", refused)
	}
	logs := s.logs.String()
	for what, secret := range map[string]string{"first key": pemBody(t, first), "second key": pemBody(t, second),
		"a private key": "PRIVATE KEY"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs show %s", what)
		}
	}
}

// rotatorFixture is a non-dev provider set (APNs, Twilio, SMTP) built from
// files in a temporary directory, and a rotator whose reload reads next.
type rotatorFixture struct {
	dir     string
	cfg     Config
	next    Config
	loadErr error
	ps      map[string]herald.Provider
	rot     *rotator
	logs    *syncBuffer
}

func newRotatorFixture(t *testing.T) *rotatorFixture {
	t.Helper()
	f := &rotatorFixture{dir: t.TempDir(), logs: &syncBuffer{}}
	file := func(name, content string) string {
		p := filepath.Join(f.dir, name)
		writeAtomically(t, p, content)
		return p
	}
	c := defaultConfig()
	c.APNs = APNsConfig{KeyFile: file("AuthKey.p8", p8Key(t)), KeyID: "KEY0000001", TeamID: "TEAM000001",
		Topic: "com.example.app", Endpoint: "https://127.0.0.1:1"}
	c.Twilio = TwilioConfig{AccountSID: "AC0123456789abcdef0123456789abcdef", AuthTokenFile: file("twilio", "token-one-Jq48"),
		From: "+15550100", BaseURL: "http://127.0.0.1:1", StatusCallbackURL: "https://herald.example.com/v1/providers/twilio/status"}
	c.SMTP = SMTPConfig{Host: "127.0.0.1", Port: 1, TLS: "none", AllowInsecureAuth: true, Username: "herald",
		PasswordFile: file("smtp", "smtp-one-Lw03"), From: "no-reply@example.com"}
	f.cfg, f.next = c, c
	f.ps = map[string]herald.Provider{}
	if err := c.realProviders(f.ps); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(f.logs, nil))
	f.rot = newRotator(c, func() (Config, error) { return f.next, f.loadErr }, f.ps, log)
	return f
}

func (f *rotatorFixture) gen(name string) *generation { return f.rot.handles[name].cur.Load() }

// twilioAccepts reports whether the running Twilio provider verifies a
// status callback signed with token.
func (f *rotatorFixture) twilioAccepts(token string) bool {
	form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}}
	sig := twilio.Signature(token, f.cfg.Twilio.StatusCallbackURL+"?delivery=k1", form)
	_, err := f.ps["twilio"].(herald.StatusCallbacks).VerifyStatusCallback("delivery=k1", form, sig)
	return err == nil
}

// A reload applies credential keys only, to every provider whose
// credentials changed or to none; what it refuses or does not apply it
// says.
func TestReloadRotatesOnlyCredentials(t *testing.T) {
	t.Parallel()
	f := newRotatorFixture(t)
	apnsBefore, twilioBefore, smtpBefore := f.gen("apns"), f.gen("twilio"), f.gen("smtp")
	if !f.twilioAccepts("token-one-Jq48") {
		t.Fatal("the fixture's status callback does not verify; the test proves nothing")
	}

	// Nothing changed: nothing rotates.
	if err := f.rot.Reload(); err != nil {
		t.Fatal(err)
	}
	if f.gen("apns") != apnsBefore || f.gen("twilio") != twilioBefore || f.gen("smtp") != smtpBefore {
		t.Fatal("a reload without changes replaced a client")
	}

	// Keys that take a restart are named and left alone.
	f.next.APNs.Topic, f.next.Worker.BatchSize = "com.example.other", 7
	if err := f.rot.Reload(); err != nil {
		t.Fatal(err)
	}
	warn := f.logs.logLines("reload: these configuration keys changed but take a restart; not applied")
	if len(warn) != 1 || !reflect.DeepEqual(warn[0]["keys"], []any{"worker.batch_size", "apns.topic"}) {
		t.Fatalf("restart warning %v", warn)
	}
	if f.gen("apns") != apnsBefore || f.rot.running.APNs.Topic != "com.example.app" {
		t.Fatal("apns.topic was applied")
	}
	f.next = f.cfg

	// A new auth token and a new password rotate Twilio and SMTP.
	writeAtomically(t, f.cfg.Twilio.AuthTokenFile, "token-two-Pe72")
	writeAtomically(t, f.cfg.SMTP.PasswordFile, "smtp-two-Gx95")
	if err := f.rot.Reload(); err != nil {
		t.Fatal(err)
	}
	if f.gen("twilio") == twilioBefore || f.gen("smtp") == smtpBefore || f.gen("apns") != apnsBefore {
		t.Fatal("the wrong providers rotated")
	}
	if f.twilioAccepts("token-one-Jq48") || !f.twilioAccepts("token-two-Pe72") {
		t.Fatal("status callbacks are not verified with the new auth token")
	}
	var rotated []string
	for _, l := range f.logs.logLines("provider credentials rotated") {
		rotated = append(rotated, l["provider"].(string))
	}
	if !slices.Equal(rotated, []string{"twilio", "smtp"}) {
		t.Fatalf("rotation lines for %v", rotated)
	}

	// A bad APNs key refuses the whole reload: Twilio's change waits too.
	twilioNow := f.gen("twilio")
	writeAtomically(t, f.cfg.Twilio.AuthTokenFile, "token-three-Zc11")
	writeAtomically(t, f.cfg.APNs.KeyFile, "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
	if err := f.rot.Reload(); err == nil || !strings.Contains(err.Error(), "apns") {
		t.Fatalf("a bad APNs key: %v", err)
	}
	if f.gen("twilio") != twilioNow || f.gen("apns") != apnsBefore {
		t.Fatal("a refused reload replaced a client")
	}

	// A configuration that does not load, and one that removes a
	// provider, are refused.
	writeAtomically(t, f.cfg.APNs.KeyFile, p8Key(t))
	f.loadErr = errors.New("config file herald.yaml: yaml: line 3: did not find expected key")
	if err := f.rot.Reload(); err == nil {
		t.Fatal("a configuration that does not load was applied")
	}
	f.loadErr = nil
	f.next.APNs.KeyFile = ""
	if err := f.rot.Reload(); err == nil || !strings.Contains(err.Error(), "removed only by a restart") {
		t.Fatalf("removing APNs: %v", err)
	}
	if n := len(f.logs.logLines("reload refused: the running providers keep their credentials")); n != 3 {
		t.Fatalf("%d refusals logged, want 3", n)
	}
	f.next = f.cfg

	// A provider configured only now is added by a restart, not a reload.
	em := fcmemu.New(fcmemu.Config{PublicURL: "http://127.0.0.1:1"})
	f.next.FCM.CredentialsJSON = string(em.ServiceAccountJSON("p1"))
	if err := f.rot.Reload(); err != nil {
		t.Fatal(err)
	}
	if l := f.logs.logLines("reload: a provider not running at start is added only by a restart; not applied"); len(l) != 1 || l[0]["provider"] != "fcm" {
		t.Fatalf("adding FCM: %v", l)
	}
	if f.gen("twilio") == twilioNow || f.gen("apns") == apnsBefore {
		t.Fatal("the valid changes were not applied once the configuration was fixed")
	}

	for what, secret := range map[string]string{"a Twilio token": "token-", "an SMTP password": "smtp-one", "the new SMTP password": "smtp-two",
		"a key": "PRIVATE KEY"} {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("the logs show %s:\n%s", what, f.logs.String())
		}
	}
}

// credentialKeys is exactly what withCredentialsOf copies.
func TestCredentialKeys(t *testing.T) {
	t.Parallel()
	var a, b Config
	fill := func(v reflect.Value, s string) {
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Struct:
				for i := range v.NumField() {
					walk(v.Field(i))
				}
			case reflect.String:
				v.SetString(s)
			}
		}
		walk(v)
	}
	fill(reflect.ValueOf(&a).Elem(), "a")
	fill(reflect.ValueOf(&b).Elem(), "b")
	got := changedKeys(reflect.ValueOf(a), reflect.ValueOf(a.withCredentialsOf(&b)), "")
	if !slices.Equal(got, credentialKeys) {
		t.Fatalf("withCredentialsOf copies %v\nthe documented list is %v", got, credentialKeys)
	}
}

// A handle offers the root package and the dispatcher exactly the optional
// capabilities of the client it wraps: one it lacked would silently turn a
// feature off (payload checks, status callbacks), one it added would
// claim what the client cannot do.
func TestHandleForwardsCapabilities(t *testing.T) {
	t.Parallel()
	capabilities := []reflect.Type{
		reflect.TypeFor[herald.NotificationValidator](), reflect.TypeFor[herald.VAPIDKeyer](),
		reflect.TypeFor[herald.CodeLister](), reflect.TypeFor[herald.DeviceValidator](),
		reflect.TypeFor[herald.StatusCallbacks](), reflect.TypeFor[dispatch.ThrottleScoper](),
	}
	f := newRotatorFixture(t)
	em := fcmemu.New(fcmemu.Config{PublicURL: "http://127.0.0.1:1"})
	fc, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("p1")})
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]any{"fcm": fc, "apns": f.gen("apns").p.(*apns.Client),
		"twilio": f.gen("twilio").p.(*twilio.Client), "smtp": f.gen("smtp").p.(*smtp.Client)}
	for name, client := range clients {
		h := newHandle(name, client.(rotatable), credentials{})
		for _, c := range capabilities {
			if want, got := reflect.TypeOf(client).Implements(c), reflect.TypeOf(h).Implements(c); want != got {
				t.Errorf("%s: the client implements %v: %v, its handle: %v", name, c, want, got)
			}
		}
	}
}
