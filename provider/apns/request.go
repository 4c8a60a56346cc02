package apns

import (
	"crypto/sha1"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/jsonenc"
)

// MaxPayloadBytes is APNs' limit on a notification's JSON payload (VoIP
// pushes may carry 5120 bytes; Herald does not send those).
const MaxPayloadBytes = 4096

// Keys of the payload Herald writes itself. The notification's data cannot
// override them: "aps" is Apple's dictionary, the app relies on messageId to
// drop duplicates (S0.5), and on title/body to render a data-only message
// (S1.4).
const (
	keyAps       = "aps"
	keyMessageID = "messageId"
	keyTitle     = "title"
	keyBody      = "body"
)

// maxMessageIDLen is the longest messageId Herald sends: "<notification
// id>.<delivery id>", a 26-character ULID, a dot and an int64 of up to 19
// digits (heraldtype.DeliveryKey). CheckPayload runs before deliveries exist,
// so it counts the key at this length.
const maxMessageIDLen = 26 + 1 + 19

// Push types and priorities Herald sends (PROTOCOLS.md, S1.4).
const (
	pushTypeAlert      = "alert"
	pushTypeBackground = "background"
	// priorityImmediate delivers at once and may wake the device.
	priorityImmediate = "10"
	// priorityPowerAware lets iOS batch delivery to save power; APNs
	// requires it for background pushes.
	priorityPowerAware = "5"
)

// pushTypeAndPriority chooses apns-push-type and apns-priority (S1.4): a
// data-only notification is a background push, which APNs only accepts at
// priority 5; an alert goes at 10 unless it is LOW.
func pushTypeAndPriority(n *heraldtype.Notification) (string, string) {
	if n.PayloadMode == heraldtype.PayloadData {
		return pushTypeBackground, priorityPowerAware
	}
	if n.Priority == heraldtype.PriorityLow {
		return pushTypeAlert, priorityPowerAware
	}
	return pushTypeAlert, priorityImmediate
}

// appendPayload appends the APNs JSON payload of n, sent with idempotency
// key key, to dst. It is written by hand rather than through json.Marshal:
// this is the hot path of every iOS push, and merging the notification's
// data with Herald's keys would otherwise cost a fresh map per send. Data
// keys are written in map iteration order; APNs and iOS do not care.
//
// Shapes (S1.4):
//   - alert: {"aps":{"alert":{"title","body"},"sound":"default"}, data…,
//     "messageId"}; the OS displays it.
//   - data:  {"aps":{"content-available":1}, data…, "title", "body",
//     "messageId"}; iOS wakes the app, which renders (and personalises) it.
func appendPayload(dst []byte, n *heraldtype.Notification, key string) []byte {
	dataMode := n.PayloadMode == heraldtype.PayloadData
	switch {
	case dataMode:
		dst = append(dst, `{"aps":{"content-available":1}`...)
	case n.Title != "" || n.Body != "":
		dst = append(dst, `{"aps":{"alert":{`...)
		first := true
		if n.Title != "" {
			dst = jsonenc.AppendPair(dst, first, keyTitle, n.Title)
			first = false
		}
		if n.Body != "" {
			dst = jsonenc.AppendPair(dst, first, keyBody, n.Body)
		}
		dst = append(dst, `},"sound":"default"}`...)
	default:
		dst = append(dst, `{"aps":{}`...)
	}
	for k, v := range n.Data {
		if reservedKey(k, dataMode) {
			continue // CheckPayload refuses these at trigger time
		}
		dst = jsonenc.AppendPair(dst, false, k, v)
	}
	if dataMode {
		if n.Title != "" {
			dst = jsonenc.AppendPair(dst, false, keyTitle, n.Title)
		}
		if n.Body != "" {
			dst = jsonenc.AppendPair(dst, false, keyBody, n.Body)
		}
	}
	dst = jsonenc.AppendPair(dst, false, keyMessageID, key)
	return append(dst, '}')
}

// reservedKey reports whether k is a payload key Herald writes itself.
func reservedKey(k string, dataMode bool) bool {
	return k == keyAps || k == keyMessageID || (dataMode && (k == keyTitle || k == keyBody))
}

// estimateSize guesses the encoded payload size so the buffer is allocated
// once.
func estimateSize(n *heraldtype.Notification, key string) int {
	size := 96 + len(key) + 2*(len(n.Title)+len(n.Body))
	for k, v := range n.Data {
		size += len(k) + len(v) + 6
	}
	return size
}

// CheckPayload reports whether n can be sent through APNs: its data keys do
// not collide with the payload's own and its payload, with the messageId
// Herald adds (S0.5), fits APNs' 4096-byte limit. It is meant for the
// moment a notification is accepted, so that a message APNs would refuse is
// rejected with a clear error instead of dying in the queue. Errors are
// *heraldtype.Error with code EINVALID or ETOOLARGE.
func CheckPayload(n *heraldtype.Notification) error {
	if n == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "notification is missing")
	}
	dataMode := n.PayloadMode == heraldtype.PayloadData
	for k := range n.Data {
		switch {
		case k == "":
			return heraldtype.FieldErrorf("data", "keys must not be empty")
		case k == keyAps:
			return heraldtype.FieldErrorf("data", "key %q is reserved by APNs", k)
		case k == keyMessageID:
			return heraldtype.FieldErrorf("data", "key %q is reserved: Herald sets it to the delivery's idempotency key", k)
		case dataMode && (k == keyTitle || k == keyBody):
			return heraldtype.FieldErrorf("data", "key %q is reserved in data-only payloads: Herald puts the notification's %s there", k, k)
		}
	}
	// The exact encoded size, with the longest messageId: JSON escaping
	// counts against Apple's limit too.
	size := len(appendPayload(make([]byte, 0, estimateSize(n, "")+maxMessageIDLen), n, strings.Repeat("0", maxMessageIDLen)))
	if size > MaxPayloadBytes {
		return heraldtype.Errorf(heraldtype.ETOOLARGE,
			"APNs payload is %d bytes (encoded JSON of title, body and data, with the message id), over APNs' limit of %d bytes",
			size, MaxPayloadBytes)
	}
	return nil
}

// apnsIDNamespace is the name-space of apns-id UUIDs (RFC 9562 §5.5): a
// fixed random UUID of Herald's, 6f1d7c1e-5b0a-4c55-9a43-3c0d2b8f4e21.
const apnsIDNamespace = "\x6f\x1d\x7c\x1e\x5b\x0a\x4c\x55\x9a\x43\x3c\x0d\x2b\x8f\x4e\x21"

// messageUUID derives the apns-id of a delivery from its idempotency key: a
// name-based (version 5) UUID, so every retry and replay of a delivery
// carries the same apns-id and Apple's logs and the emulator tie the
// attempts together.
func messageUUID(key string) string {
	h := sha1.New()
	h.Write([]byte(apnsIDNamespace))
	h.Write([]byte(key))
	var sum [sha1.Size]byte
	u := h.Sum(sum[:0])
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(u, jsonenc.HexDigits)
}

// formatUUID formats 16 bytes as 8-4-4-4-12 with the given digits (lower
// or upper case).
func formatUUID(u []byte, digits string) string {
	var out [36]byte
	j := 0
	for i := 0; i < 16; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = digits[u[i]>>4], digits[u[i]&0xf]
		j += 2
	}
	return string(out[:])
}

// validDeviceToken reports whether t looks like an APNs device token: hex,
// an even number of digits, at least 32 bytes (64 digits, today's length)
// and at most 100 bytes (Apple has said tokens may grow).
func validDeviceToken(t string) bool {
	if len(t) < 64 || len(t) > 200 || len(t)%2 != 0 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
