package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// rotatableProviders are the providers whose credentials a reload
// replaces without a restart (issue 21 item 7), in the order they are
// built and logged.
var rotatableProviders = []string{"fcm", "apns", "twilio", "smtp"}

// rotatable is what each of those providers' clients offers: the handle
// forwards exactly these capabilities (and Twilio's status callbacks), so
// the root package finds the same ones by type assertion on the handle as
// on the client (rotate_test.go checks it).
type rotatable interface {
	herald.Provider
	herald.NotificationValidator
	herald.CodeLister
}

// credentials is what a provider client was built from: a digest of the
// secret material, to tell whether a reload changed it, and the log
// attributes that name the credential — key id, account SID, service
// account — never a secret.
type credentials struct {
	sum [sha256.Size]byte
	who []any
}

// newCredentials digests parts (each length-prefixed, so moving bytes from
// one part to the next changes the sum) and keeps who for the logs.
func newCredentials(parts [][]byte, who ...any) credentials {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	var c credentials
	copy(c.sum[:], h.Sum(nil))
	c.who = who
	return c
}

// fcmCredentials names a service account by its e-mail and key id, which
// are not secret (the private key is).
func fcmCredentials(creds []byte, project string) credentials {
	var sa struct {
		ClientEmail  string `json:"client_email"`
		PrivateKeyID string `json:"private_key_id"`
	}
	_ = json.Unmarshal(creds, &sa) // fcm.New parsed it already
	return newCredentials([][]byte{creds, []byte(project)},
		"client_email", sa.ClientEmail, "private_key_id", sa.PrivateKeyID, "project_id", project)
}

// handle is a provider whose client a reload swaps. The dispatcher and the
// root package hold the handle; each call loads the current client once,
// so a send in flight finishes on the client it started with, and the
// next one uses the new client. An old client is dropped, not closed: its
// idle connections close after its transport's idle timeout.
type handle struct {
	name string
	cur  atomic.Pointer[generation]
}

// generation is one client of a handle and the credentials it holds.
type generation struct {
	p     rotatable
	creds credentials
}

func newHandle(name string, p rotatable, creds credentials) herald.Provider {
	h := &handle{name: name}
	h.cur.Store(&generation{p: p, creds: creds})
	if _, ok := p.(herald.StatusCallbacks); ok {
		return &callbackHandle{h}
	}
	return h
}

func (h *handle) rotation() *handle { return h }

func (h *handle) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	return h.cur.Load().p.Send(ctx, m)
}

func (h *handle) ValidateNotification(n *heraldtype.Notification) error {
	return h.cur.Load().p.ValidateNotification(n)
}

func (h *handle) Codes() []string { return h.cur.Load().p.Codes() }

// String names the provider and never its credentials.
func (h *handle) String() string { return h.name + " (rotatable credentials)" }

// callbackHandle is the handle of a provider that verifies status
// callbacks (Twilio): a callback is checked with the current credentials.
type callbackHandle struct{ *handle }

func (h *callbackHandle) VerifyStatusCallback(rawQuery string, form url.Values, signature string) (heraldtype.ProviderReport, error) {
	return h.cur.Load().p.(herald.StatusCallbacks).VerifyStatusCallback(rawQuery, form, signature)
}

var (
	_ rotatable              = (*handle)(nil)
	_ herald.StatusCallbacks = (*callbackHandle)(nil)
)

// rotator reloads the configuration of a running serve and swaps in the
// provider clients whose credentials changed (README: Rotating
// credentials).
type rotator struct {
	log  *slog.Logger
	load func() (Config, error)

	mu      sync.Mutex // one reload at a time; guards running
	running Config     // the configuration in effect
	handles map[string]*handle
}

// newRotator finds the handles among ps; cfg is the configuration they
// were built from.
func newRotator(cfg Config, load func() (Config, error), ps map[string]herald.Provider, log *slog.Logger) *rotator {
	r := &rotator{log: log, load: load, running: cfg, handles: map[string]*handle{}}
	for name, p := range ps {
		if h, ok := p.(interface{ rotation() *handle }); ok {
			r.handles[name] = h.rotation()
		}
	}
	return r
}

// Reload reads the configuration again and applies its providers'
// credential keys (credentialKeys): every provider whose credentials
// changed gets a new client, all of them or none. A configuration that
// does not load, or a credential that does not build, is refused with the
// reason logged, and every provider keeps its client. Other changed keys
// are logged as needing a restart and are not applied.
func (r *rotator) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, err := r.load()
	if err != nil {
		return r.refuse(err)
	}
	eff := r.running.withCredentialsOf(&next)
	if keys := changedKeys(reflect.ValueOf(eff), reflect.ValueOf(next), ""); len(keys) > 0 {
		r.log.Warn("reload: these configuration keys changed but take a restart; not applied", "keys", keys)
	}
	type swap struct {
		name string
		gen  *generation
	}
	var swaps []swap
	var errs []error
	for _, name := range rotatableProviders {
		h := r.handles[name]
		p, creds, err := eff.rotatableProvider(name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case h == nil && p != nil:
			r.log.Warn("reload: a provider not running at start is added only by a restart; not applied", "provider", name)
		case h != nil && p == nil:
			errs = append(errs, fmt.Errorf("%s: the new configuration has no credentials; a provider is removed only by a restart", name))
		case h != nil && creds.sum != h.cur.Load().creds.sum:
			swaps = append(swaps, swap{name, &generation{p: p, creds: creds}})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return r.refuse(err)
	}
	rotated := []string{}
	for _, s := range swaps {
		old := r.handles[s.name].cur.Swap(s.gen)
		rotated = append(rotated, s.name)
		r.log.Info("provider credentials rotated", "provider", s.name,
			slog.Group("credentials", s.gen.creds.who...), slog.Group("previous", old.creds.who...))
	}
	r.running = eff
	r.log.Info("reload: provider credentials applied", "rotated", rotated, "providers", slices.Sorted(maps.Keys(r.handles)))
	return nil
}

func (r *rotator) refuse(err error) error {
	r.log.Error("reload refused: the running providers keep their credentials", "err", err)
	return err
}

// credentialKeys are the keys a reload applies; the README lists them.
// Everything else, provider endpoints and senders included, takes a
// restart.
var credentialKeys = []string{
	"fcm.credentials_file", "fcm.credentials_json", "fcm.project_id",
	"apns.key_file", "apns.key_id", "apns.team_id",
	"twilio.auth_token", "twilio.auth_token_file", "twilio.api_key_sid", "twilio.api_key_secret", "twilio.api_key_secret_file",
	"smtp.username", "smtp.password", "smtp.password_file", "smtp.oauth2.client_id", "smtp.oauth2.client_secret",
	"smtp.oauth2.client_secret_file", "smtp.oauth2.refresh_token", "smtp.oauth2.refresh_token_file",
}

// withCredentialsOf returns c with next's credentialKeys.
func (c Config) withCredentialsOf(next *Config) Config {
	c.FCM.CredentialsFile, c.FCM.CredentialsJSON, c.FCM.ProjectID = next.FCM.CredentialsFile, next.FCM.CredentialsJSON, next.FCM.ProjectID
	c.APNs.KeyFile, c.APNs.KeyID, c.APNs.TeamID = next.APNs.KeyFile, next.APNs.KeyID, next.APNs.TeamID
	t, nt := &c.Twilio, next.Twilio
	t.AuthToken, t.AuthTokenFile, t.APIKeySID, t.APIKeySecret, t.APIKeySecretFile = nt.AuthToken, nt.AuthTokenFile, nt.APIKeySID, nt.APIKeySecret, nt.APIKeySecretFile
	c.SMTP.Username, c.SMTP.Password, c.SMTP.PasswordFile = next.SMTP.Username, next.SMTP.Password, next.SMTP.PasswordFile
	o, n := &c.SMTP.OAuth2, next.SMTP.OAuth2
	o.ClientID, o.ClientSecret, o.ClientSecretFile = n.ClientID, n.ClientSecret, n.ClientSecretFile
	o.RefreshToken, o.RefreshTokenFile = n.RefreshToken, n.RefreshTokenFile
	return c
}

// changedKeys lists the configuration keys (koanf names) whose values
// differ between a and b; the values are never part of the answer.
func changedKeys(a, b reflect.Value, prefix string) []string {
	if a.Kind() != reflect.Struct {
		if reflect.DeepEqual(a.Interface(), b.Interface()) {
			return nil
		}
		return []string{prefix}
	}
	var keys []string
	for i := range a.NumField() {
		tag := a.Type().Field(i).Tag.Get("koanf")
		if tag == "" {
			continue
		}
		name := tag
		if prefix != "" {
			name = prefix + "." + tag
		}
		keys = append(keys, changedKeys(a.Field(i), b.Field(i), name)...)
	}
	return keys
}

// reloadOnSIGHUP calls r on every SIGHUP until ctx ends or the returned
// stop (idempotent) is called. It registers before it returns, so a SIGHUP
// sent after serve says it listens never kills the process.
func reloadOnSIGHUP(ctx context.Context, r func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				r()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			// Stop only after the loop ended: a SIGHUP arriving meanwhile
			// is still caught (and dropped), never the default "terminate".
			signal.Stop(ch)
		})
	}
}
