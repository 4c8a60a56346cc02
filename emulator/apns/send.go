package apns

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
)

// maxRequestBytes bounds a request body read. APNs' payload limit is far
// below it; the bound only keeps a broken client from exhausting memory.
const maxRequestBytes = 1 << 20

// maxCollapseIDBytes is APNs' limit on apns-collapse-id.
const maxCollapseIDBytes = 64

// reasonBadPayload answers a body that is not a JSON object. Apple documents
// no reason for it; the emulator's own name keeps the failure visible, and
// the Client classifies it as the permanent 400 it is.
const reasonBadPayload = "BadPayload"

// knownPushType reports whether t is an apns-push-type value APNs knows.
func knownPushType(t string) bool {
	switch t {
	case "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets":
		return true
	}
	return false
}

// handleSend is POST /3/device/{token}.
func (e *Emulator) handleSend(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 {
		// APNs negotiates HTTP/2 or nothing; a client that fell back to
		// HTTP/1.1 would fail against Apple, so it fails here too.
		http.Error(w, "APNs accepts HTTP/2 only", http.StatusHTTPVersionNotSupported)
		return
	}
	if r.Method != http.MethodPost {
		e.fail(w, ReasonMethodNotAllowed)
		return
	}
	// APNs answers every request, failed or not, with an apns-id: the
	// request's if it is valid, else one it makes up.
	id := r.Header.Get("Apns-Id")
	if !canonicalUUID(id) {
		id = newUUID()
	}
	w.Header().Set("apns-id", id)
	token := r.PathValue("token")
	if !validDeviceToken(token) {
		e.fail(w, ReasonBadDeviceToken)
		return
	}
	now := e.cfg.Now()
	auth, reason := e.authenticate(r, now)
	if reason != "" {
		e.fail(w, reason)
		return
	}
	if !e.faults.Wait(r.Context()) {
		return
	}

	rec := Received{Token: token, TeamID: auth.teamID, KeyID: auth.keyID, Proto: r.Proto, ReceivedAt: now}
	if reason := e.checkHeaders(r.Header, &rec); reason != "" {
		e.fail(w, reason)
		return
	}
	if reason, at := e.checkDeviceToken(token, rec.Topic); reason != "" {
		e.faults.Reject(reason)
		e.writeReason(w, reason, at)
		return
	}
	body, tooLarge, ok := emulator.ReadBody(w, r, maxRequestBytes)
	if !ok {
		if tooLarge {
			e.fail(w, ReasonPayloadTooLarge)
		}
		return
	}
	if reason := checkPayload(body, &rec); reason != "" {
		e.fail(w, reason)
		return
	}
	rec.APNsID = id

	if inj, fail := e.faults.Pick(token, now, nil); fail {
		e.writeFault(w, inj, now)
		return
	}
	e.faults.Accept()
	e.rec.Record(rec)
	if e.cfg.Logger != nil {
		e.cfg.Logger.Info("apns emulator: message accepted", "apns_id", rec.APNsID, "token", token,
			"topic", rec.Topic, "push_type", rec.PushType, "priority", rec.Priority, "payload", rec.Payload)
	}
	w.WriteHeader(http.StatusOK)
}

// checkHeaders validates the apns-* headers as APNs does and fills rec.
func (e *Emulator) checkHeaders(h http.Header, rec *Received) string {
	for _, name := range []string{"Apns-Topic", "Apns-Push-Type", "Apns-Priority", "Apns-Expiration", "Apns-Collapse-Id", "Apns-Id"} {
		if len(h[name]) > 1 {
			return ReasonDuplicateHeaders
		}
	}
	rec.Topic = h.Get("Apns-Topic")
	switch {
	case rec.Topic == "":
		return ReasonMissingTopic
	case strings.ContainsFunc(rec.Topic, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return ReasonBadTopic
	case len(e.topics) > 0 && !e.topics[rec.Topic]:
		return ReasonTopicDisallowed
	}
	rec.PushType = h.Get("Apns-Push-Type")
	if rec.PushType != "" && !knownPushType(rec.PushType) {
		return ReasonInvalidPushType
	}
	rec.Priority = 10 // APNs' default when the header is absent
	if v := h.Get("Apns-Priority"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || (p != 10 && p != 5 && p != 1) {
			return ReasonBadPriority
		}
		rec.Priority = p
	}
	if rec.PushType == pushTypeBackground && rec.Priority == 10 {
		// Apple: background notifications must be sent at priority 5
		// (S1.4).
		return ReasonBadPriority
	}
	if v := h.Get("Apns-Expiration"); v != "" {
		exp, err := strconv.ParseInt(v, 10, 64)
		if err != nil || exp < 0 {
			return ReasonBadExpirationDate
		}
		rec.Expiration = exp
	}
	rec.CollapseID = h.Get("Apns-Collapse-Id")
	if len(rec.CollapseID) > maxCollapseIDBytes {
		return ReasonBadCollapseID
	}
	if id := h.Get("Apns-Id"); id != "" && !canonicalUUID(id) {
		return ReasonBadMessageID
	}
	return ""
}

// checkPayload validates the body as APNs does and notes what APNs would
// accept but a device would not show as intended.
func checkPayload(body []byte, rec *Received) string {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return ReasonPayloadEmpty
	case len(body) > MaxPayloadBytes:
		return ReasonPayloadTooLarge
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return reasonBadPayload
	}
	rec.Payload = json.RawMessage(body)
	raw, ok := top[keyAps]
	if !ok {
		rec.Warnings = append(rec.Warnings, "the payload has no aps dictionary")
		return ""
	}
	var aps map[string]json.RawMessage
	if json.Unmarshal(raw, &aps) != nil || aps == nil {
		return reasonBadPayload
	}
	if rec.PushType == pushTypeBackground {
		if string(aps["content-available"]) != "1" {
			rec.Warnings = append(rec.Warnings, "a background push without aps.content-available 1 does not wake the app")
		}
		for _, k := range []string{"alert", "sound", "badge"} {
			if _, ok := aps[k]; ok {
				rec.Warnings = append(rec.Warnings, "a background push must not carry aps."+k)
			}
		}
	}
	if rec.PushType == pushTypeAlert {
		if _, ok := aps["alert"]; !ok {
			if _, ok := aps["sound"]; !ok {
				if _, ok := aps["badge"]; !ok {
					rec.Warnings = append(rec.Warnings, "an alert push without aps.alert, sound or badge shows nothing")
				}
			}
		}
	}
	return ""
}

// fail answers reason and counts it.
func (e *Emulator) fail(w http.ResponseWriter, reason string) {
	e.faults.Reject(reason)
	e.writeReason(w, reason, e.cfg.Now())
}

// writeReason answers APNs' JSON error body for reason with its status.
func (e *Emulator) writeReason(w http.ResponseWriter, reason string, now time.Time) {
	status, _ := reasonStatus(reason)
	if status == 0 {
		status = http.StatusBadRequest // reasonBadPayload
	}
	if w.Header().Get("apns-id") == "" {
		w.Header().Set("apns-id", newUUID()) // APNs answers every request with one
	}
	body := errorBody{Reason: reason}
	if status == http.StatusGone {
		body.Timestamp = now.UnixMilli()
	}
	if reason == ReasonIdleTimeout || reason == ReasonShutdown {
		// APNs closes the connection after these; Go's HTTP/2 server
		// turns "Connection: close" into a GOAWAY.
		w.Header().Set("Connection", "close")
	}
	writeJSON(w, status, body)
}

// canonicalUUID reports whether s is a UUID in 8-4-4-4-12 hex form.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// newUUID returns a random (version 4) UUID in upper case, as APNs
// generates them.
func newUUID() string {
	var u [16]byte
	rand.Read(u[:]) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+).
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u[:])
}

// Messages returns the accepted messages, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the accepted messages sent to device token, oldest
// first.
func (e *Emulator) MessagesTo(token string) []Received {
	return e.rec.Where(func(m Received) bool { return m.Token == token })
}
