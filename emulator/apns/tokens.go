package apns

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// deviceTokenState is what the emulator knows of a device token it issued
// or was told about.
type deviceTokenState struct {
	topic string // the bundle id the token was issued for; "" for any
	// unregisteredAt is when the app was uninstalled (UnregisterDeviceToken):
	// APNs answers 410 Unregistered with that time from then on.
	unregisteredAt time.Time
}

// NewDeviceToken mints a device token as an iOS app receives one from
// didRegisterForRemoteNotificationsWithDeviceToken (32 bytes, 64 hex
// digits), registered for topic (a bundle id; "" accepts any): a send to it
// with another apns-topic is answered DeviceTokenNotForTopic, as APNs
// answers a token of another app.
func (e *Emulator) NewDeviceToken(topic string) string {
	var b [32]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+).
	token := hex.EncodeToString(b[:])
	e.tokenMu.Lock()
	e.deviceTokens[token] = deviceTokenState{topic: topic}
	e.tokenMu.Unlock()
	return token
}

// RegisterDeviceToken registers a token obtained elsewhere for topic ("":
// any), so that a strict emulator (Config.RegisteredTokensOnly) accepts it.
// It refuses a token APNs would answer BadDeviceToken.
func (e *Emulator) RegisterDeviceToken(token, topic string) error {
	if !validDeviceToken(token) {
		return errors.New("apns emulator: a device token is 64 hex digits (at most 200)")
	}
	e.tokenMu.Lock()
	e.deviceTokens[strings.ToLower(token)] = deviceTokenState{topic: topic}
	e.tokenMu.Unlock()
	return nil
}

// UnregisterDeviceToken marks a token as no longer valid for its topic, as
// when the app is uninstalled: later sends are answered 410 Unregistered
// with the time it happened (the emulator's clock), strict or not.
func (e *Emulator) UnregisterDeviceToken(token string) {
	token = strings.ToLower(token)
	now := e.cfg.Now()
	e.tokenMu.Lock()
	s := e.deviceTokens[token]
	s.unregisteredAt = now
	e.deviceTokens[token] = s
	e.tokenMu.Unlock()
}

// checkDeviceToken answers what APNs knows of token for topic: Unregistered
// once the app is gone, DeviceTokenNotForTopic for a token of another app,
// BadDeviceToken for a token it never issued when strict (the answer APNs
// gives a token of the other environment too); "" when the send may go
// ahead. The time is that of an Unregistered answer.
func (e *Emulator) checkDeviceToken(token, topic string) (string, time.Time) {
	e.tokenMu.RLock()
	s, ok := e.deviceTokens[strings.ToLower(token)]
	e.tokenMu.RUnlock()
	switch {
	case !ok && e.cfg.RegisteredTokensOnly:
		return ReasonBadDeviceToken, time.Time{}
	case !ok:
		return "", time.Time{}
	case !s.unregisteredAt.IsZero():
		return ReasonUnregistered, s.unregisteredAt
	case s.topic != "" && s.topic != topic:
		return ReasonDeviceTokenNotForTopic, time.Time{}
	}
	return "", time.Time{}
}

// handleNewDeviceToken is POST /emulator/device-tokens: {"topic": "…"}
// issues a token for that bundle id (NewDeviceToken); {"token": "…",
// "topic": "…"} registers the given one. An empty body issues a token for
// any topic. It answers 201 {"token": "…", "topic": "…"}.
func (e *Emulator) handleNewDeviceToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token string `json:"token"`
		Topic string `json:"topic"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading the body: " + err.Error()})
		return
	}
	if strings.TrimSpace(string(body)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON: " + err.Error()})
			return
		}
	}
	if req.Token == "" {
		req.Token = e.NewDeviceToken(req.Topic)
	} else if err := e.RegisterDeviceToken(req.Token, req.Topic); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "token: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"token": req.Token, "topic": req.Topic})
}

// handleDeleteDeviceToken is DELETE /emulator/device-tokens/{token}:
// UnregisterDeviceToken.
func (e *Emulator) handleDeleteDeviceToken(w http.ResponseWriter, r *http.Request) {
	e.UnregisterDeviceToken(r.PathValue("token"))
	w.WriteHeader(http.StatusNoContent)
}
