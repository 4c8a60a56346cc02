package fcm

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// MaxPayloadBytes is FCM's limit on a message's data plus notification.
const MaxPayloadBytes = 4096

// maxMessageIDLen is the longest data.messageId Herald sends:
// "<notification id>.<delivery id>", a 26-character ULID, a dot and an
// int64 of up to 19 digits (heraldtype.DeliveryKey). CheckPayload runs before
// deliveries exist, so it counts the key at this length.
const maxMessageIDLen = 26 + 1 + 19

// payloadSize counts a message's payload the way both the Client and the
// Emulator check it against MaxPayloadBytes: the bytes of every data key
// and value, plus the notification's field names and values. FCM does not
// publish its exact accounting; counting field names as well keeps Herald
// on the safe side of it.
func payloadSize(data map[string]string, title, body, image string) int {
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	if title != "" {
		size += len(keyTitle) + len(title)
	}
	if body != "" {
		size += len(keyBody) + len(body)
	}
	if image != "" {
		size += len("image") + len(image)
	}
	return size
}

// reservedDataKey reports whether FCM rejects k as a data key: "from",
// "message_type" and anything starting with "google" or "gcm" are its own.
func reservedDataKey(k string) bool {
	return k == "from" || k == "message_type" || strings.HasPrefix(k, "google") || strings.HasPrefix(k, "gcm")
}

// CheckPayload reports whether n can be sent through FCM: its data keys are
// allowed and its payload, with the data.messageId Herald adds (S0.5),
// fits FCM's 4096-byte limit. It is meant for the moment a notification is
// accepted, so that a message FCM would refuse is rejected with a clear
// error instead of dying in the queue. Errors are *heraldtype.Error with
// code EINVALID or ETOOLARGE.
func CheckPayload(n *heraldtype.Notification) error {
	if n == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "notification is missing")
	}
	dataMode := n.PayloadMode == heraldtype.PayloadData
	for k := range n.Data {
		switch {
		case k == "":
			return heraldtype.FieldErrorf("data", "keys must not be empty")
		case k == keyMessageID:
			return heraldtype.FieldErrorf("data", "key %q is reserved: Herald sets it to the delivery's idempotency key", k)
		case dataMode && (k == keyTitle || k == keyBody):
			return heraldtype.FieldErrorf("data", "key %q is reserved in data-only payloads: Herald puts the notification's %s there", k, k)
		case reservedDataKey(k):
			return heraldtype.FieldErrorf("data", "key %q is reserved by FCM (from, message_type, google*, gcm*)", k)
		}
	}
	size := payloadSize(n.Data, n.Title, n.Body, "") + len(keyMessageID) + maxMessageIDLen
	if size > MaxPayloadBytes {
		return heraldtype.Errorf(heraldtype.ETOOLARGE,
			"push payload is %d bytes (title, body and data, with the message id), over FCM's limit of %d bytes",
			size, MaxPayloadBytes)
	}
	return nil
}
