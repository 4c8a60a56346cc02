package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
)

// maxMessageBytes bounds a message's body.
const maxMessageBytes = 1 << 20

// handleMessage is POST /{path...}: a message to the endpoint at path.
func (e *Emulator) handleMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		e.refuse(w, http.StatusMethodNotAllowed, "POST a message")
		return
	}
	if strings.HasPrefix(r.URL.Path, "/emulator/") {
		e.refuse(w, http.StatusNotFound, "no such emulator route")
		return
	}
	if e.CurrentFaults().Down {
		e.drop(w)
		return
	}
	body, tooLarge, ok := emulator.ReadBody(w, r, maxMessageBytes)
	if !ok {
		if tooLarge {
			e.refuse(w, http.StatusRequestEntityTooLarge, "the body is too large")
		}
		return
	}
	now := e.cfg.Now()
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	m := Received{ID: id, Path: r.URL.Path, Body: body, ReceivedAt: now}
	m.Timestamp, _ = strconv.ParseInt(ts, 10, 64)
	var typed struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &typed) == nil {
		m.Type = typed.Type
	}
	if id == "" || ts == "" || r.Header.Get("webhook-signature") == "" {
		m.Status = http.StatusBadRequest
		e.record(m)
		e.refuse(w, http.StatusBadRequest, "webhook-id, webhook-timestamp and webhook-signature are required")
		return
	}
	if len(e.secrets) > 0 {
		if err := e.verify(id, ts, r.Header.Get("webhook-signature"), body, now); err != nil {
			m.Status = http.StatusUnauthorized
			e.record(m)
			e.badSigs.Inc()
			e.refuse(w, http.StatusUnauthorized, err.Error())
			return
		}
		m.Verified = true
	}
	if !e.faults.Wait(r.Context()) {
		return
	}
	if inj, fail := e.faults.Pick(m.Path, now, nil); fail {
		m.Status = inj.Outcome.Status
		e.record(m)
		writeFault(w, inj)
		return
	}
	e.mu.Lock()
	m.Redelivery = e.seen[id]
	e.seen[id] = true
	e.mu.Unlock()
	if m.Redelivery {
		e.redelivered.Inc()
	}
	m.Status = http.StatusNoContent
	e.faults.Accept()
	e.record(m)
	w.WriteHeader(http.StatusNoContent)
}

// verify checks a message's signatures as the Standard Webhooks
// specification has a receiver do: the timestamp within the tolerance of
// now, then one "v1," signature equal (in constant time) to the
// HMAC-SHA256 of "id.timestamp.body" under one of the secrets.
func (e *Emulator) verify(id, ts, sigs string, body []byte, now time.Time) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q is not a number of seconds", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > e.cfg.Tolerance || d < -e.cfg.Tolerance {
		return fmt.Errorf("webhook-timestamp %d is more than %s from now", sec, e.cfg.Tolerance)
	}
	signed := []byte(id + "." + ts + ".")
	signed = append(signed, body...)
	for _, key := range e.secrets {
		m := hmac.New(sha256.New, key)
		m.Write(signed)
		want := m.Sum(nil)
		for _, s := range strings.Fields(sigs) {
			if b64, ok := strings.CutPrefix(s, "v1,"); ok {
				if got, err := base64.StdEncoding.DecodeString(b64); err == nil && hmac.Equal(got, want) {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("no signature in webhook-signature matches a configured secret")
}

// decodeSecret decodes a serialized secret.
func decodeSecret(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if err != nil || len(k) == 0 {
		return nil, fmt.Errorf("webhook emulator: secret %.10q…: not \"whsec_\" and base64", s)
	}
	return k, nil
}

// drop closes the connection without an answer, as a receiver that is not
// running would leave the sender with a connection error.
func (e *Emulator) drop(w http.ResponseWriter) {
	e.dropped.Inc()
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// A connection that cannot be taken over (HTTP/2) gets the nearest
	// thing to silence a handler can give.
	writeError(w, http.StatusServiceUnavailable, "down")
}

// refuse answers a message the emulator will not take, and counts it.
func (e *Emulator) refuse(w http.ResponseWriter, status int, msg string) {
	e.faults.Reject(status)
	writeError(w, status, msg)
}

// record keeps an answered message and logs it when there is a logger.
func (e *Emulator) record(m Received) {
	e.rec.Record(m)
	if e.cfg.Logger != nil {
		e.cfg.Logger.Info("webhook emulator: message answered", "id", m.ID, "type", m.Type, "path", m.Path,
			"status", m.Status, "verified", m.Verified, "redelivery", m.Redelivery)
	}
}

// writeError answers {"error": msg} with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	emulator.WriteJSON(w, status, jsonContentType, map[string]string{"error": msg})
}
