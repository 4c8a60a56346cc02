package webpush

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// emuSubscription is a subscription the emulator created, with the private
// half a browser would keep.
type emuSubscription struct {
	id       string
	endpoint string
	key      *ecdh.PrivateKey
	p256dh   string
	auth     []byte
	// appServerKey is the applicationServerKey the subscription was
	// created with (raw bytes); nil accepts any VAPID key.
	appServerKey []byte
	expired      bool
}

// SubscriptionJSON is a subscription in the shape of the browser's
// PushSubscription.toJSON(), what a web app posts to its backend.
type SubscriptionJSON struct {
	Endpoint       string           `json:"endpoint"`
	ExpirationTime *int64           `json:"expirationTime"`
	Keys           SubscriptionKeys `json:"keys"`
}

// SubscriptionKeys are a subscription's p256dh and auth keys, base64url.
type SubscriptionKeys struct {
	P256DH string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// NewSubscription creates a browser-like subscription that accepts any
// VAPID key, and returns its endpoint and keys: register them as a web
// device (Token = endpoint). The emulator keeps the private key to decrypt
// what is pushed to it. The endpoint is built from URL, so the emulator
// must be started (or given Config.PublicURL) first; otherwise
// NewSubscription panics, as that is a mistake in the calling test.
func (e *Emulator) NewSubscription() (endpoint, p256dh, auth string) {
	s, err := e.newSubscription(nil)
	if err != nil {
		panic("webpush emulator: " + err.Error())
	}
	return s.endpoint, s.p256dh, b64(s.auth)
}

// NewSubscriptionFor creates a subscription bound to applicationServerKey
// (a base64url VAPID public key), as PushManager.subscribe does: a push
// signed with another key is refused with 403, like real push services.
func (e *Emulator) NewSubscriptionFor(applicationServerKey string) (endpoint, p256dh, auth string, err error) {
	k, err := decodeB64(applicationServerKey)
	if err != nil || len(k) != publicKeyLen || k[0] != 4 {
		return "", "", "", errors.New("applicationServerKey is not a base64url uncompressed P-256 public key")
	}
	if _, err := ecdh.P256().NewPublicKey(k); err != nil {
		return "", "", "", errors.New("applicationServerKey is not a point on P-256")
	}
	s, err := e.newSubscription(k)
	if err != nil {
		return "", "", "", err
	}
	return s.endpoint, s.p256dh, b64(s.auth), nil
}

func (e *Emulator) newSubscription(appServerKey []byte) (*emuSubscription, error) {
	base := e.URL()
	if base == "" {
		return nil, errors.New("the emulator has no URL yet: Start it or set Config.PublicURL")
	}
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the subscription key: %w", err)
	}
	idRaw := make([]byte, 16)
	auth := make([]byte, authSecretLen)
	if _, err := rand.Read(idRaw); err != nil {
		return nil, err
	}
	if _, err := rand.Read(auth); err != nil {
		return nil, err
	}
	id := b64(idRaw)
	s := &emuSubscription{
		id: id, endpoint: strings.TrimSuffix(base, "/") + "/push/" + id,
		key: key, p256dh: b64(key.PublicKey().Bytes()), auth: auth,
		appServerKey: appServerKey,
	}
	e.subMu.Lock()
	e.subs[id] = s
	e.subMu.Unlock()
	return s, nil
}

// ExpireSubscription marks a subscription as gone, as when the user
// revokes permission: every later push to it is answered 410 Gone.
func (e *Emulator) ExpireSubscription(endpoint string) error {
	e.subMu.Lock()
	defer e.subMu.Unlock()
	s, ok := e.subs[subscriptionID(endpoint)]
	if !ok {
		return fmt.Errorf("no subscription with endpoint %q", endpoint)
	}
	s.expired = true
	return nil
}

// subscription returns the subscription with id, and whether it exists.
func (e *Emulator) subscription(id string) (*emuSubscription, bool) {
	e.subMu.RLock()
	defer e.subMu.RUnlock()
	s, ok := e.subs[id]
	if !ok {
		return nil, false
	}
	cp := *s
	return &cp, true
}

// subscriptionID extracts the id from an endpoint URL; a bare id is
// returned as is.
func subscriptionID(endpoint string) string {
	if i := strings.LastIndex(endpoint, "/push/"); i >= 0 {
		return endpoint[i+len("/push/"):]
	}
	return endpoint
}

func (e *Emulator) handleNewSubscription(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ApplicationServerKey string `json:"applicationServerKey"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading the body: " + err.Error()})
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON: " + err.Error()})
			return
		}
	}
	var endpoint, p256dh, auth string
	if req.ApplicationServerKey != "" {
		endpoint, p256dh, auth, err = e.NewSubscriptionFor(req.ApplicationServerKey)
	} else {
		var s *emuSubscription
		if s, err = e.newSubscription(nil); err == nil {
			endpoint, p256dh, auth = s.endpoint, s.p256dh, b64(s.auth)
		}
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, SubscriptionJSON{Endpoint: endpoint, Keys: SubscriptionKeys{P256DH: p256dh, Auth: auth}})
}

func (e *Emulator) handleExpireSubscription(w http.ResponseWriter, r *http.Request) {
	if err := e.ExpireSubscription(r.PathValue("id")); err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
