package apns

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Provider-token checks of the emulator. APNs refuses a token issued more
// than an hour ago; a token from the future is not valid, but a minute of
// clock skew between sender and emulator is forgiven.
const (
	maxTokenAge  = time.Hour
	maxClockSkew = time.Minute
	// maxVerified bounds the cache of verified tokens; past it the cache
	// starts over, which costs one signature check per live token.
	maxVerified = 4096
)

// DefaultTeamID is the team id the emulator's helpers use when given none.
const DefaultTeamID = "HERALDDEV0"

type emuKey struct {
	teamID string
	pub    *ecdsa.PublicKey
}

// verifiedToken is what a checked provider token says.
type verifiedToken struct {
	teamID, keyID string
	iat           time.Time
}

// jwtSeen is the latest provider token a key presented, and when it was
// first seen.
type jwtSeen struct {
	jwt   string
	first time.Time
}

// RegisterKey makes the emulator accept provider tokens with kid keyID
// and iss teamID signed by the private half of pub.
func (e *Emulator) RegisterKey(teamID, keyID string, pub *ecdsa.PublicKey) error {
	switch {
	case !appleID(teamID):
		return fmt.Errorf("apns emulator: team id %q is not 10 characters of A-Z, 0-9", teamID)
	case !appleID(keyID):
		return fmt.Errorf("apns emulator: key id %q is not 10 characters of A-Z, 0-9", keyID)
	case pub == nil || pub.Curve != elliptic.P256():
		return errors.New("apns emulator: the public key must be a P-256 key")
	}
	e.keyMu.Lock()
	defer e.keyMu.Unlock()
	e.keys[keyID] = emuKey{teamID: teamID, pub: pub}
	return nil
}

// NewProviderKey generates a token-signing key for teamID (DefaultTeamID if
// empty), registers it and returns it as Apple hands it out: the .p8 PEM
// file's contents and its key id.
func (e *Emulator) NewProviderKey(teamID string) (p8 []byte, keyID string, err error) {
	if teamID == "" {
		teamID = DefaultTeamID
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("apns emulator: generating a key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, "", fmt.Errorf("apns emulator: encoding the key: %w", err)
	}
	keyID = randomAppleID()
	if err := e.RegisterKey(teamID, keyID, &key.PublicKey); err != nil {
		return nil, "", err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), keyID, nil
}

// randomAppleID returns 10 random characters of A-Z and 0-9, the shape of
// Apple's key ids.
func randomAppleID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [10]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+).
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// authenticate checks the request's provider token as APNs does and
// returns the token's claims, or the reason to refuse it.
func (e *Emulator) authenticate(r *http.Request, now time.Time) (verifiedToken, string) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return verifiedToken{}, ReasonMissingProviderToken
	}
	if len(values) > 1 {
		return verifiedToken{}, ReasonDuplicateHeaders
	}
	scheme, tok, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || tok == "" {
		return verifiedToken{}, ReasonMissingProviderToken
	}
	e.keyMu.Lock()
	defer e.keyMu.Unlock()
	vt, ok := e.verified[tok]
	if !ok {
		var reason string
		if vt, reason = e.verify(tok); reason != "" {
			return verifiedToken{}, reason
		}
		if len(e.verified) >= maxVerified {
			clear(e.verified)
		}
		e.verified[tok] = vt
	}
	switch {
	case vt.iat.After(now.Add(maxClockSkew)):
		return verifiedToken{}, ReasonInvalidProviderToken
	case now.Sub(vt.iat) > maxTokenAge:
		return verifiedToken{}, ReasonExpiredProviderToken
	}
	last, seen := e.lastJWT[vt.keyID]
	if !seen || last.jwt != tok {
		if seen && e.cfg.EnforceTokenUpdateInterval && now.Sub(last.first) < tokenMinInterval {
			return verifiedToken{}, ReasonTooManyProviderTokenUpdates
		}
		e.lastJWT[vt.keyID] = jwtSeen{jwt: tok, first: now}
		e.providerTokens.Inc()
	}
	return vt, ""
}

// verify checks a provider token's shape, key and signature; e.keyMu must
// be held.
func (e *Emulator) verify(tok string) (verifiedToken, string) {
	var claims jwt.MapClaims
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, &claims)
	if err != nil || parsed.Method.Alg() != jwt.SigningMethodES256.Alg() {
		return verifiedToken{}, ReasonInvalidProviderToken
	}
	kid, _ := parsed.Header["kid"].(string)
	iss, _ := claims["iss"].(string)
	iat, err := claims.GetIssuedAt()
	if kid == "" || iss == "" || err != nil || iat == nil {
		return verifiedToken{}, ReasonInvalidProviderToken
	}
	vt := verifiedToken{teamID: iss, keyID: kid, iat: iat.Time}
	key, known := e.keys[kid]
	if !known {
		if e.cfg.AcceptUnknownKeys {
			return vt, ""
		}
		return verifiedToken{}, ReasonInvalidProviderToken
	}
	if key.teamID != iss {
		return verifiedToken{}, ReasonInvalidProviderToken
	}
	// Claims are judged above with the emulator's clock, not the
	// library's.
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodES256.Alg()}), jwt.WithoutClaimsValidation())
	if _, err := p.Parse(tok, func(*jwt.Token) (any, error) { return key.pub, nil }); err != nil {
		return verifiedToken{}, ReasonInvalidProviderToken
	}
	return vt, ""
}

// handleNewKey is POST /emulator/keys[?team_id=]: a provider key for
// clients outside this process.
func (e *Emulator) handleNewKey(w http.ResponseWriter, r *http.Request) {
	teamID := r.URL.Query().Get("team_id")
	if teamID != "" && !appleID(teamID) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "team_id must be 10 characters of A-Z, 0-9"})
		return
	}
	if teamID == "" {
		teamID = DefaultTeamID
	}
	p8, keyID, err := e.NewProviderKey(teamID)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"team_id": teamID, "key_id": keyID, "key_p8": string(p8)})
}
