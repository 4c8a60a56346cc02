package fcm

import (
	"encoding/json"
	"net/http"
)

// The answers below reproduce real FCM bodies: google.rpc.Status with an
// FcmError detail where FCM sends one (PROTOCOLS.md; firebase-admin-go's
// messaging.handleFCMError reads exactly this shape).

func fcmError(status int, grpcStatus, message, code string, extra ...errorDetail) googleError {
	details := append([]errorDetail{{Type: fcmErrorType, ErrorCode: code}}, extra...)
	return googleError{Error: googleStatus{Code: status, Message: message, Status: grpcStatus, Details: details}}
}

// faultError returns the answer for an injected fault code, and false for
// an unknown code.
func faultError(code string) (googleError, bool) {
	switch code {
	case CodeUnregistered:
		return fcmError(http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.", code), true
	case CodeInvalidArgument:
		return fcmError(http.StatusBadRequest, "INVALID_ARGUMENT", "Request contains an invalid argument.", code), true
	case FaultInvalidToken:
		return invalidTokenError(), true
	case CodeSenderIDMismatch:
		return fcmError(http.StatusForbidden, "PERMISSION_DENIED", "SenderId mismatch", code), true
	case CodeThirdPartyAuthError:
		return fcmError(http.StatusUnauthorized, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", code), true
	case CodeQuotaExceeded:
		return fcmError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Sending limit exceeded for the message target.", code,
			errorDetail{Type: "type.googleapis.com/google.rpc.QuotaFailure", Violations: []quotaViolation{{
				Subject: "device", Description: "Device message rate exceeded."}}}), true
	case CodeUnavailable:
		return fcmError(http.StatusServiceUnavailable, "UNAVAILABLE", "The service is currently unavailable.", code), true
	case CodeInternal:
		return fcmError(http.StatusInternalServerError, "INTERNAL", "Internal error encountered.", code), true
	case FaultUnauthenticated:
		return unauthenticatedError(), true
	case FaultProjectQuota:
		return googleError{Error: googleStatus{
			Code:    http.StatusTooManyRequests,
			Status:  "RESOURCE_EXHAUSTED",
			Message: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' of service 'fcm.googleapis.com' for consumer 'project_number:000000000000'.",
			Details: []errorDetail{{
				Type:   "type.googleapis.com/google.rpc.ErrorInfo",
				Reason: "RATE_LIMIT_EXCEEDED",
				Domain: "googleapis.com",
				Metadata: map[string]string{
					"quota_metric": "fcm.googleapis.com/send_requests",
					"quota_limit":  "SendsPerMinutePerProject",
					"service":      "fcm.googleapis.com",
				},
			}},
		}}, true
	case FaultBadGateway:
		return googleError{Error: googleStatus{Code: http.StatusBadGateway}}, true // answered as HTML by writeFault
	}
	return googleError{}, false
}

// invalidTokenError is FCM's answer to a malformed registration token.
func invalidTokenError() googleError {
	return fcmError(http.StatusBadRequest, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", CodeInvalidArgument)
}

// unauthenticatedError is Google's answer to a missing or refused access
// token: no FcmError, as from any Google API.
func unauthenticatedError() googleError {
	return googleError{Error: googleStatus{
		Code:    http.StatusUnauthorized,
		Status:  "UNAUTHENTICATED",
		Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
	}}
}

// permissionDeniedError answers a token of another project.
func permissionDeniedError(project string) googleError {
	return googleError{Error: googleStatus{
		Code:    http.StatusForbidden,
		Status:  "PERMISSION_DENIED",
		Message: "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/" + project + "' (or it may not exist).",
	}}
}

// badRequest is a proto-JSON level rejection (unknown field, wrong type):
// google.rpc.BadRequest only, no FcmError, as Google's front end answers
// before FCM sees the message.
func badRequest(field, description string) *googleError {
	return &googleError{Error: googleStatus{
		Code:    http.StatusBadRequest,
		Status:  "INVALID_ARGUMENT",
		Message: description,
		Details: []errorDetail{{
			Type:            "type.googleapis.com/google.rpc.BadRequest",
			FieldViolations: []fieldViolation{{Field: field, Description: description}},
		}},
	}}
}

// invalidArgument is FCM's own rejection of a well-formed but invalid
// message: FcmError INVALID_ARGUMENT plus the offending field.
func invalidArgument(field, message string) *googleError {
	ge := fcmError(http.StatusBadRequest, "INVALID_ARGUMENT", message, CodeInvalidArgument,
		errorDetail{Type: "type.googleapis.com/google.rpc.BadRequest",
			FieldViolations: []fieldViolation{{Field: field, Description: message}}})
	return &ge
}

// tooBig is FCM's answer to an oversized payload: no details at all.
func tooBig() *googleError {
	return &googleError{Error: googleStatus{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: "Message is too big"}}
}

// writeGoogleError answers ge with its HTTP status.
func writeGoogleError(w http.ResponseWriter, ge googleError) {
	body, _ := json.Marshal(ge)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(ge.Error.Code)
	w.Write(body) //nolint:errcheck // the client hung up; nothing to do.
}

// rejectCode is the counter key of an error answer: its FcmError code, or
// its Google status.
func rejectCode(ge *googleError) string {
	for _, d := range ge.Error.Details {
		if d.Type == fcmErrorType {
			return d.ErrorCode
		}
	}
	return ge.Error.Status
}
