package webpush

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/heraldhq/herald/emulator/internal/emulator"
)

// Reasons under which Stats.Rejected counts error answers.
// Injected faults count as "fault_<status>".
const (
	ReasonNotFound         = "not_found"
	ReasonGone             = "gone"
	ReasonVAPID            = "vapid"
	ReasonVAPIDKeyMismatch = "vapid_key_mismatch"
	ReasonTTL              = "ttl"
	ReasonUrgency          = "urgency"
	ReasonTopic            = "topic"
	ReasonEncoding         = "content_encoding"
	ReasonTooLarge         = "too_large"
	ReasonDecrypt          = "decrypt"
)

// maxVAPIDLifetime is RFC 8292 §2's limit on exp: 24 hours after the
// request.
const maxVAPIDLifetime = 24 * time.Hour

// handlePush is POST /push/{id}: an RFC 8030 §5 push to one subscription.
func (e *Emulator) handlePush(w http.ResponseWriter, r *http.Request) {
	now := e.cfg.Now()
	sub, ok := e.subscription(r.PathValue("id"))
	if !ok {
		e.rejectWith(w, ReasonNotFound, http.StatusNotFound, 102, "Request did not validate: invalid token")
		return
	}
	if sub.expired {
		e.rejectWith(w, ReasonGone, http.StatusGone, 103, "Request did not validate: no such subscription")
		return
	}
	claims, status, msg := e.verifyVAPID(r, sub, now)
	if status != 0 {
		reason := ReasonVAPID
		if status == http.StatusForbidden {
			reason = ReasonVAPIDKeyMismatch
		}
		e.rejectWith(w, reason, status, 109, msg)
		return
	}
	if r.Header.Get("TTL") == "" {
		e.rejectWith(w, ReasonTTL, http.StatusBadRequest, 111, "Missing TTL header (RFC 8030 §5.2)")
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get("TTL"))
	if err != nil || ttl < 0 {
		e.rejectWith(w, ReasonTTL, http.StatusBadRequest, 112, "Invalid TTL header: want a non-negative integer of seconds")
		return
	}
	urg := r.Header.Get("Urgency")
	switch urg {
	case "":
		urg = "normal" // RFC 8030 §5.3 default
	case "very-low", "low", "normal", "high":
	default:
		e.rejectWith(w, ReasonUrgency, http.StatusBadRequest, 110, "Invalid Urgency header: want very-low, low, normal or high")
		return
	}
	topic := r.Header.Get("Topic")
	if topic != "" && !validTopic(topic) {
		e.rejectWith(w, ReasonTopic, http.StatusBadRequest, 114, "Invalid Topic header: want at most 32 base64url characters")
		return
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		e.rejectWith(w, ReasonEncoding, http.StatusBadRequest, 110, "Content-Encoding is "+strconv.Quote(ce)+", want aes128gcm (RFC 8291)")
		return
	}
	body, tooLarge, ok := emulator.ReadBody(w, r, MaxBodyBytes)
	if !ok {
		if tooLarge {
			e.rejectWith(w, ReasonTooLarge, http.StatusRequestEntityTooLarge, 104,
				"Request did not validate: message payload too large (over "+strconv.Itoa(MaxBodyBytes)+" bytes)")
		}
		return
	}
	if !e.faults.Wait(r.Context()) {
		return
	}
	if inj, fail := e.faults.Pick(sub.id, now, nil); fail {
		writeFault(w, inj, now)
		return
	}

	plain, err := Decrypt(body, sub.key, sub.auth)
	if err != nil {
		// A real push service cannot see this; the browser would drop
		// the message silently. The emulator plays both and says so.
		e.rejectWith(w, ReasonDecrypt, http.StatusBadRequest, 110, "The subscriber could not decrypt the message: "+err.Error())
		return
	}
	rec := Received{
		Endpoint: sub.endpoint, SubscriptionID: sub.id, MessageID: e.nextMessageID(),
		ReceivedAt: now, TTL: ttl, Urgency: urg, Topic: topic,
		Subject: claims.subject, VAPIDKey: claims.key, BodyBytes: len(body), Plaintext: string(plain),
	}
	if json.Valid(plain) {
		rec.Payload = json.RawMessage(plain)
	}
	e.faults.Accept()
	e.rec.Record(rec)
	if e.cfg.Logger != nil {
		e.cfg.Logger.Info("webpush emulator: message accepted", "endpoint", sub.endpoint, "message_id", rec.MessageID,
			"ttl", ttl, "urgency", urg, "topic", topic, "payload", rec.Plaintext)
	}
	base := strings.TrimSuffix(e.URL(), "/")
	if base == "" {
		base = requestOrigin(r) // mounted on someone else's server without PublicURL
	}
	w.Header().Set("Location", base+"/message/"+rec.MessageID)
	w.Header().Set("TTL", strconv.Itoa(ttl))
	w.WriteHeader(http.StatusCreated)
}

// vapidClaims is what a verified VAPID token said.
type vapidClaims struct {
	subject string
	key     string // k=, base64url
}

// verifyVAPID checks the Authorization header as RFC 8292 requires: the
// "vapid" scheme with t= and k=, an ES256 JWT signed by k, aud the origin
// of this push service, exp in the future but at most 24 hours ahead, and
// a mailto:/https: sub. It returns 401 for a missing or bad token and 403
// for a valid token from a key the subscription was not created with.
func (e *Emulator) verifyVAPID(r *http.Request, sub *emuSubscription, now time.Time) (vapidClaims, int, string) {
	var c vapidClaims
	h := r.Header.Get("Authorization")
	if h == "" {
		return c, http.StatusUnauthorized, "Missing Authorization header: want vapid t=<JWT>, k=<public key> (RFC 8292 §3)"
	}
	scheme, params, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "vapid") {
		return c, http.StatusUnauthorized, "Authorization scheme is " + strconv.Quote(scheme) + ", want vapid (RFC 8292 §3)"
	}
	var token string
	for _, p := range strings.Split(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch strings.ToLower(name) {
		case "t":
			token = value
		case "k":
			c.key = value
		}
	}
	if token == "" || c.key == "" {
		return c, http.StatusUnauthorized, "Authorization lacks t= or k= (RFC 8292 §3)"
	}
	rawKey, err := decodeB64(c.key)
	if err != nil {
		return c, http.StatusUnauthorized, "k= is not base64url"
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), rawKey)
	if err != nil {
		return c, http.StatusUnauthorized, "k= is not an uncompressed P-256 public key"
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithLeeway(e.cfg.ClockSkew))
	if err != nil {
		return c, http.StatusUnauthorized, "VAPID token rejected: " + err.Error()
	}
	exp, _ := claims.GetExpirationTime() // present and valid: checked above
	if exp.Sub(now) > maxVAPIDLifetime+e.cfg.ClockSkew {
		return c, http.StatusUnauthorized, "VAPID token rejected: exp is more than 24 hours ahead (RFC 8292 §2)"
	}
	aud, _ := claims.GetAudience()
	if !e.audienceOK(r, aud) {
		return c, http.StatusUnauthorized, "VAPID token rejected: aud " + strconv.Quote(strings.Join(aud, " ")) +
			" is not this push service's origin " + strconv.Quote(requestOrigin(r))
	}
	c.subject, _ = claims["sub"].(string)
	if !strings.HasPrefix(c.subject, "mailto:") && !strings.HasPrefix(c.subject, "https:") {
		return c, http.StatusUnauthorized, "VAPID token rejected: sub " + strconv.Quote(c.subject) + " is not a mailto: or https: URI (RFC 8292 §2.1)"
	}
	if sub.appServerKey != nil && !bytes.Equal(rawKey, sub.appServerKey) {
		return c, http.StatusForbidden, "VAPID key does not match the applicationServerKey the subscription was created with"
	}
	return c, 0, ""
}

// audienceOK reports whether aud names this push service: the origin the
// request was addressed to, or the emulator's configured URL (behind a
// proxy the two differ).
func (e *Emulator) audienceOK(r *http.Request, aud []string) bool {
	if len(aud) != 1 {
		return false
	}
	return aud[0] == requestOrigin(r) || aud[0] == strings.TrimSuffix(e.URL(), "/")
}

// requestOrigin is scheme://host of the request as the client addressed it.
func requestOrigin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// rejectWith counts and answers an error.
func (e *Emulator) rejectWith(w http.ResponseWriter, reason string, status, errno int, message string) {
	e.faults.Reject(reason)
	writeError(w, status, errno, message)
}

// nextMessageID mints the id of an accepted message.
func (e *Emulator) nextMessageID() string {
	return "m" + strconv.FormatUint(e.seq.Add(1), 36)
}

// Messages returns the accepted messages, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the accepted messages posted to endpoint, oldest
// first.
func (e *Emulator) MessagesTo(endpoint string) []Received {
	id := subscriptionID(endpoint)
	return e.rec.Where(func(m Received) bool { return m.SubscriptionID == id })
}
