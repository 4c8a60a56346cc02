package fcm

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// MaxRegistrationTokenBytes bounds a registration token. Google documents
// no pattern and asks senders not to validate one, but an upper bound of
// 4 KiB (a cookie) has been given for the token since GCM.
const MaxRegistrationTokenBytes = 4096

// ValidRegistrationToken reports whether t has the syntax of an FCM
// registration token: 1 to 4096 characters of the URL-safe base64 alphabet
// (A–Z a–z 0–9 - _) and ':'. A real token is the app instance's Firebase
// installation id, ':' and "APA91b…" — about 160 such characters; the check
// keeps to the alphabet (no minimum length) so short test tokens such as
// "tok-1" pass while what can never be a token — a Web Push endpoint URL,
// an APNs token with spaces or angle brackets, a JSON object — is answered
// INVALID_ARGUMENT, as FCM answers it.
func ValidRegistrationToken(t string) bool {
	if t == "" || len(t) > MaxRegistrationTokenBytes {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// NewRegistrationToken mints a registration token shaped like a real one (a 22-
// character installation id, ":APA91b", then URL-safe base64: 163
// characters) and registers it, as an app's FirebaseMessaging.getToken
// would. With Config.RegisteredTokensOnly only tokens issued or registered
// this way are accepted.
func (e *Emulator) NewRegistrationToken() string {
	var fid [16]byte
	var rest [100]byte
	rand.Read(fid[:])  //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+).
	rand.Read(rest[:]) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+).
	// A Firebase installation id starts with the 4 bits 0111 (c, d, e or f
	// once encoded).
	fid[0] = 0x70 | fid[0]&0x0f
	enc := base64.RawURLEncoding
	token := enc.EncodeToString(fid[:])[:22] + ":APA91b" + enc.EncodeToString(rest[:])[:134]
	e.registerToken(token)
	return token
}

// RegisterToken registers a token an app obtained elsewhere, so that a
// strict emulator (Config.RegisteredTokensOnly) accepts it. It refuses a
// token that is not valid syntax (ValidRegistrationToken).
func (e *Emulator) RegisterToken(token string) error {
	if !ValidRegistrationToken(token) {
		return errors.New("fcm emulator: not a valid FCM registration token")
	}
	e.registerToken(token)
	return nil
}

// UnregisterToken forgets a registered token, as when the app is
// uninstalled: a strict emulator answers later sends to it UNREGISTERED.
func (e *Emulator) UnregisterToken(token string) {
	e.regMu.Lock()
	delete(e.registered, token)
	e.regMu.Unlock()
}

func (e *Emulator) registerToken(token string) {
	e.regMu.Lock()
	e.registered[token] = true
	e.regMu.Unlock()
}

// knownToken reports whether a send to token may go ahead: always unless
// the emulator is strict, then only for registered tokens.
func (e *Emulator) knownToken(token string) bool {
	if !e.cfg.RegisteredTokensOnly || token == "" {
		return true
	}
	e.regMu.RLock()
	defer e.regMu.RUnlock()
	return e.registered[token]
}

// unregisteredError is FCM's answer to a well-formed token it does not
// know (never issued, or the app was uninstalled).
func unregisteredError() googleError {
	return fcmError(http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.", CodeUnregistered)
}

// handleNewToken is POST /emulator/tokens: with an empty body it issues a
// token (NewRegistrationToken); with {"token": "…"} it registers that one. It
// answers 201 {"token": "…"}.
func (e *Emulator) handleNewToken(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRegistrationTokenBytes+64))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading the body: " + err.Error()})
		return
	}
	var req struct {
		Token string `json:"token"`
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
		writeJSON(w, http.StatusCreated, map[string]string{"token": e.NewRegistrationToken()})
		return
	}
	if err := e.RegisterToken(req.Token); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "token: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"token": req.Token})
}

// handleDeleteToken is DELETE /emulator/tokens/{token}: UnregisterToken.
func (e *Emulator) handleDeleteToken(w http.ResponseWriter, r *http.Request) {
	e.UnregisterToken(r.PathValue("token"))
	w.WriteHeader(http.StatusNoContent)
}
