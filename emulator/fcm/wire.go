package fcm

import (
	"strings"
	"time"
)

// FCM's error codes (google.firebase.fcm.v1.FcmError.errorCode) and the
// Google statuses the emulator answers without one. They are the wire
// protocol's own strings: the Client in provider/fcm classifies the same
// ones, and the emulator keeps its copy so that it stays apart from what
// it imitates.
const (
	CodeInvalidArgument     = "INVALID_ARGUMENT"
	CodeUnregistered        = "UNREGISTERED"
	CodeSenderIDMismatch    = "SENDER_ID_MISMATCH"
	CodeQuotaExceeded       = "QUOTA_EXCEEDED"
	CodeUnavailable         = "UNAVAILABLE"
	CodeInternal            = "INTERNAL"
	CodeThirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
	CodeUnauthenticated     = "UNAUTHENTICATED"
)

// MaxPayloadBytes is FCM's limit on a message's data plus notification.
const MaxPayloadBytes = 4096

// maxTTL is FCM's longest time to live (28 days).
const maxTTL = 28 * 24 * time.Hour

// messagingScope is the OAuth2 scope FCM HTTP v1 requires.
const messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

// fcmErrorType is the @type of the detail carrying FCM's errorCode.
const fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

// googleError is the JSON error body of Google APIs (google.rpc.Status).
type googleError struct {
	Error googleStatus `json:"error"`
}

type googleStatus struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Status  string        `json:"status"`
	Details []errorDetail `json:"details,omitempty"`
}

// errorDetail is the union of the detail types FCM sends: FcmError,
// google.rpc.BadRequest, google.rpc.QuotaFailure and google.rpc.ErrorInfo.
type errorDetail struct {
	Type            string            `json:"@type"`
	ErrorCode       string            `json:"errorCode,omitempty"`
	FieldViolations []fieldViolation  `json:"fieldViolations,omitempty"`
	Violations      []quotaViolation  `json:"violations,omitempty"`
	Reason          string            `json:"reason,omitempty"`
	Domain          string            `json:"domain,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
}

type fieldViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
}

type quotaViolation struct {
	Subject     string `json:"subject,omitempty"`
	Description string `json:"description"`
}

// oauthError is RFC 6749's error answer.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// payloadSize counts a message's payload as FCM is taken to: the bytes of
// every data key and value, plus the notification's field names and values
// (the Client in provider/fcm checks its payloads the same way).
func payloadSize(data map[string]string, title, body, image string) int {
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	for _, field := range [...][2]string{{"title", title}, {"body", body}, {"image", image}} {
		if field[1] != "" {
			size += len(field[0]) + len(field[1])
		}
	}
	return size
}

// reservedDataKey reports whether FCM rejects k as a data key: "from",
// "message_type" and anything starting with "google" or "gcm" are its own.
func reservedDataKey(k string) bool {
	return k == "from" || k == "message_type" || strings.HasPrefix(k, "google") || strings.HasPrefix(k, "gcm")
}
