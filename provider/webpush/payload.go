package webpush

import (
	"crypto/sha256"
	"encoding/json"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// Payload is the JSON a web app's service worker receives as
// `event.data.json()` in its "push" event, after the browser has decrypted
// the message. The same shape is sent in both payload modes (S1.4):
//
//   - Mode "alert": the worker shows it as is, e.g.
//     `self.registration.showNotification(p.title, {body: p.body, data: p.data, tag: p.messageId})`.
//   - Mode "data": the worker builds the notification itself (personalises
//     it, updates state, or merges it with others) from the same fields.
//
// Web Push has no silent channel: browsers subscribe with
// userVisibleOnly=true and expect every push to end in a shown
// notification (Chrome shows a generic one otherwise), so "data" means
// "the app renders it", not "nothing is displayed". MessageID is the
// delivery's idempotency key (S0.5): the worker should drop a push whose
// messageId it has already handled, e.g. by using it as the notification
// tag.
type Payload struct {
	Title string            `json:"title"`
	Body  string            `json:"body"`
	Data  map[string]string `json:"data"`
	// MessageID is data.messageId in FCM terms (S0.5).
	MessageID string `json:"messageId"`
	// Mode is "alert" or "data" (heraldtype.PayloadMode).
	Mode string `json:"mode"`
	// Type is the notification type (e.g. "PRICE_DROP"), for a worker
	// that renders each type its own way.
	Type string `json:"type,omitempty"`
}

// maxMessageIDLen is the longest idempotency key Herald sends:
// "<notification id>.<delivery id>", a 26-character ULID, a dot and an
// int64 of up to 19 digits (heraldtype.DeliveryKey). CheckPayload runs
// before deliveries exist, so it counts the key at this length.
const maxMessageIDLen = 26 + 1 + 19

// newPayload builds the payload of m's notification.
func newPayload(n *heraldtype.Notification, key string) *Payload {
	data := n.Data
	if data == nil {
		data = map[string]string{} // "data":{} keeps the worker's p.data.x safe
	}
	mode := string(n.PayloadMode)
	if mode == "" {
		mode = string(heraldtype.PayloadAlert)
	}
	return &Payload{Title: n.Title, Body: n.Body, Data: data, MessageID: key, Mode: mode, Type: n.Type}
}

// encodePayload returns the JSON plaintext of n's push message.
func encodePayload(n *heraldtype.Notification, key string) ([]byte, error) {
	return json.Marshal(newPayload(n, key))
}

// CheckPayload reports whether n fits one Web Push message: its JSON
// payload, with the longest idempotency key Herald sends, must be at most
// MaxPlaintextBytes (3993) bytes, what one 4096-byte aes128gcm record
// carries (RFC 8291 §4). It is meant for the moment a notification is
// accepted, so an oversized message is refused with a clear ETOOLARGE
// *heraldtype.Error instead of dying in the queue.
func CheckPayload(n *heraldtype.Notification) error {
	if n == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "notification is missing")
	}
	b, err := encodePayload(n, strings.Repeat("0", maxMessageIDLen))
	if err != nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "notification cannot be encoded as JSON: %v", err)
	}
	if len(b) > MaxPlaintextBytes {
		return heraldtype.Errorf(heraldtype.ETOOLARGE,
			"web push payload is %d bytes as JSON (title, body and data, with the message id), over the %d bytes one encrypted message carries",
			len(b), MaxPlaintextBytes)
	}
	return nil
}

// maxTopicLen is RFC 8030 §5.4's limit on the Topic header.
const maxTopicLen = 32

// topicFor turns a value into a valid Topic: kept if it already is one
// (at most 32 base64url characters), otherwise the first 32 characters of
// the base64url SHA-256 of it, so equal values still share a topic.
func topicFor(v string) string {
	if validTopic(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return b64(sum[:])[:maxTopicLen]
}

// validTopic reports whether t is 1..32 characters of the base64url
// alphabet (RFC 8030 §5.4).
func validTopic(t string) bool {
	if t == "" || len(t) > maxTopicLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// urgency maps a priority to an RFC 8030 §5.3 Urgency.
func urgency(p heraldtype.Priority) string {
	switch p {
	case heraldtype.PriorityHigh:
		return "high"
	case heraldtype.PriorityLow:
		return "low"
	}
	return "normal"
}
