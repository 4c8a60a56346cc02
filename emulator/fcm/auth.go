package fcm

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// jwtBearerGrant is the OAuth2 grant type of a service-account assertion.
const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// maxAssertionLife is Google's limit on exp - iat of an assertion.
const maxAssertionLife = time.Hour

type emuAccount struct {
	project  string
	tokenURI string
}

type emuToken struct {
	project string // "" for a token valid for any project
	expiry  time.Time
}

// ensureKey sets up the emulator's signing key on first use, generating
// one unless Config.SigningKey is set. 2048 bits keeps the
// once-per-emulator cost around 100 ms.
func (e *Emulator) ensureKey() {
	e.keyOnce.Do(func() {
		key := e.cfg.SigningKey
		if key == nil {
			var err error
			if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
				panic("fcm emulator: generating an RSA key: " + err.Error()) // crypto/rand does not fail on supported platforms
			}
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			panic("fcm emulator: encoding the RSA key: " + err.Error()) // only for keys crypto/rsa would not produce
		}
		pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
		sum := sha256.Sum256(pub)
		e.key = key
		e.keyID = hex.EncodeToString(sum[:20]) // stable for a given key
		e.keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	})
}

// ServiceAccountJSON returns a service-account key file for projectID whose
// token_uri is this emulator's token endpoint, so that
//
//	fcm.New(fcm.Config{CredentialsJSON: e.ServiceAccountJSON("p"), Endpoint: e.URL()})
//
// works as against the real service. Call it after Start (or set
// Config.PublicURL): the token_uri needs the emulator's URL. All
// accounts share one RSA key generated per emulator.
func (e *Emulator) ServiceAccountJSON(projectID string) []byte {
	e.ensureKey()
	email := "herald-emulator@" + projectID + ".iam.gserviceaccount.com"
	tokenURI := e.URL() + "/token"
	e.authMu.Lock()
	e.accounts[email] = emuAccount{project: projectID, tokenURI: tokenURI}
	e.authMu.Unlock()
	b, _ := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  projectID,
		"private_key_id":              e.keyID,
		"private_key":                 e.keyPEM,
		"client_email":                email,
		"client_id":                   "100000000000000000000",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"universe_domain":             "googleapis.com",
	}, "", "  ")
	return b
}

// IssueToken mints an access token for projectID without the OAuth2
// exchange, for clients configured with a static token (the Firebase Admin
// SDK's option.WithTokenSource).
func (e *Emulator) IssueToken(projectID string) string {
	return e.issue(projectID)
}

// RevokeTokens invalidates every access token issued so far; the next send
// with one gets 401 UNAUTHENTICATED, as after a real revocation.
func (e *Emulator) RevokeTokens() {
	e.authMu.Lock()
	defer e.authMu.Unlock()
	clear(e.tokens)
}

// DeleteServiceAccount removes the service account ServiceAccountJSON made
// for projectID, as deleting its key in the Cloud console does: its
// assertions are refused (invalid_grant, "account not found") and the
// access tokens issued for the project are revoked, so a sender still
// holding the old credentials fails at once. (Google lets an access token
// already issued live out its hour; the emulator is stricter, which is
// what a test of credential rotation wants.)
func (e *Emulator) DeleteServiceAccount(projectID string) {
	e.authMu.Lock()
	defer e.authMu.Unlock()
	delete(e.accounts, "herald-emulator@"+projectID+".iam.gserviceaccount.com")
	for tok, t := range e.tokens {
		if t.project == projectID {
			delete(e.tokens, tok)
		}
	}
}

func (e *Emulator) issue(project string) string {
	tok := "ya29.emu-" + randomHex(24)
	now := e.cfg.Now()
	e.authMu.Lock()
	if len(e.tokens) > 4096 {
		for k, t := range e.tokens {
			if now.After(t.expiry) {
				delete(e.tokens, k)
			}
		}
	}
	e.tokens[tok] = emuToken{project: project, expiry: now.Add(e.cfg.TokenTTL)}
	e.authMu.Unlock()
	return tok
}

// handleToken is Google's OAuth2 token endpoint for the JWT-bearer grant.
func (e *Emulator) handleToken(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	fail := e.tokenFail > 0
	if fail {
		e.tokenFail--
	}
	e.mu.Unlock()
	if fail {
		writeJSON(w, http.StatusServiceUnavailable, oauthError{Error: "temporarily_unavailable", Description: "Backend Error"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "invalid_request", Description: "Malformed form body."})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != jwtBearerGrant {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "unsupported_grant_type", Description: "Invalid grant_type: " + gt})
		return
	}
	project, oerr := e.verifyAssertion(r.PostForm.Get("assertion"))
	if oerr != nil {
		writeJSON(w, http.StatusBadRequest, oerr)
		return
	}
	tok := e.issue(project)
	e.tokensIssued.Inc()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"expires_in":   int(e.cfg.TokenTTL / time.Second),
		"token_type":   "Bearer",
	})
}

// verifyAssertion checks a service-account assertion as Google does: an
// RS256 signature by a key this emulator issued, a known issuer, the token
// endpoint as audience, a short life and the FCM scope. It returns the
// account's project.
func (e *Emulator) verifyAssertion(assertion string) (string, *oauthError) {
	grantErr := func(desc string) *oauthError { return &oauthError{Error: "invalid_grant", Description: desc} }
	if assertion == "" {
		return "", &oauthError{Error: "invalid_request", Description: "Missing required parameter: assertion"}
	}
	e.ensureKey()
	// Times are judged by the wall clock, which the signer used, not by
	// Config.Now.
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(assertion, claims, func(*jwt.Token) (any, error) { return &e.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(time.Minute),
	)
	switch {
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "", grantErr("Invalid JWT Signature.")
	case errors.Is(err, jwt.ErrTokenExpired) || errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "", grantErr("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
	case err != nil:
		return "", grantErr("Invalid JWT: " + err.Error())
	}
	iss, _ := claims.GetIssuer()
	e.authMu.RLock()
	acct, ok := e.accounts[iss]
	e.authMu.RUnlock()
	if !ok {
		return "", grantErr("Invalid grant: account not found")
	}
	aud, _ := claims.GetAudience()
	if len(aud) != 1 || aud[0] != acct.tokenURI {
		return "", grantErr("Invalid JWT: Failed audience check. The right audience is " + acct.tokenURI)
	}
	exp, _ := claims.GetExpirationTime()
	iat, _ := claims.GetIssuedAt()
	if iat == nil || exp.Sub(iat.Time) > maxAssertionLife+time.Minute {
		return "", grantErr("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
	}
	scope, _ := claims["scope"].(string)
	if !hasScope(scope, messagingScope) {
		return "", &oauthError{Error: "invalid_scope", Description: "Invalid OAuth scope or ID token audience provided."}
	}
	return acct.project, nil
}

func hasScope(scopes, want string) bool {
	for _, s := range strings.Fields(scopes) {
		if s == want || s == "https://www.googleapis.com/auth/cloud-platform" {
			return true
		}
	}
	return false
}

// authorize checks the bearer token of a send to project. It writes the
// error answer and returns false when the request must stop.
func (e *Emulator) authorize(w http.ResponseWriter, r *http.Request, project string) bool {
	h := r.Header.Get("Authorization")
	tok, found := "", false
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		tok, found = strings.TrimSpace(h[7:]), true
	}
	if found && tok != "" && e.cfg.AcceptAnyToken {
		return true
	}
	e.authMu.RLock()
	t, ok := e.tokens[tok]
	e.authMu.RUnlock()
	if !found || !ok || e.cfg.Now().After(t.expiry) {
		e.faults.Reject(CodeUnauthenticated)
		writeGoogleError(w, unauthenticatedError())
		return false
	}
	if t.project != "" && t.project != project {
		e.faults.Reject("PERMISSION_DENIED")
		writeGoogleError(w, permissionDeniedError(project))
		return false
	}
	return true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never returns an error.
	return hex.EncodeToString(b)
}

// handleServiceAccount serves ServiceAccountJSON for ?project=, so users of
// `herald emulate fcm` can fetch credentials for their own clients.
func (e *Emulator) handleServiceAccount(w http.ResponseWriter, r *http.Request) {
	project := r.URL.Query().Get("project")
	if project == "" || strings.ContainsAny(project, "/?#% ") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "query parameter project (a project id) is required"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(e.ServiceAccountJSON(project)) //nolint:errcheck // the client hung up; nothing to do.
}
