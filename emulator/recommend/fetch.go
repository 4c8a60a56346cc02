package recommend

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"

	"github.com/heraldhq/herald/emulator/internal/emulator"
)

// maxRequestBytes bounds a fetch's body: MaxUsers ids of a generous length.
const maxRequestBytes = 1 << 20

// handleFetch is POST /v1/recommendations.
func (e *Emulator) handleFetch(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		e.refuse(w, http.StatusMethodNotAllowed, "POST a JSON body")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		e.refuse(w, http.StatusUnsupportedMediaType, "send Content-Type: application/json")
		return
	}
	body, tooLarge, ok := emulator.ReadBody(w, r, maxRequestBytes)
	if !ok {
		if tooLarge {
			e.refuse(w, http.StatusRequestEntityTooLarge, "the body is too large")
		}
		return
	}
	var req Request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		e.refuse(w, http.StatusBadRequest, "the body is not a fetch request: "+err.Error())
		return
	}
	switch {
	case req.Campaign == "":
		e.refuse(w, http.StatusBadRequest, "campaign is required")
		return
	case len(req.UserIDs) == 0:
		e.refuse(w, http.StatusBadRequest, "user_ids is required")
		return
	case len(req.UserIDs) > MaxUsers:
		e.refuse(w, http.StatusBadRequest, "user_ids holds more than 1000 ids")
		return
	}
	if !e.faults.Wait(r.Context()) {
		return
	}
	now := e.cfg.Now()
	call := Received{Campaign: req.Campaign, Run: req.Run, UserIDs: req.UserIDs, ReceivedAt: now}
	if inj, fail := e.faults.Pick(req.Campaign, now, nil); fail {
		call.Status = inj.Outcome.Status
		e.rec.Record(call)
		e.log(call)
		writeFault(w, inj)
		return
	}
	omit := e.CurrentFaults().OmitUsers
	ans := Answer{Users: make(map[string]UserContent, len(req.UserIDs))}
	for _, u := range req.UserIDs {
		if slices.Contains(omit, u) {
			e.omitted.Inc()
			continue
		}
		ans.Users[u] = e.Content(u)
		e.usersAnswered.Inc()
	}
	call.Status = http.StatusOK
	e.faults.Accept()
	e.rec.Record(call)
	e.log(call)
	emulator.WriteJSON(w, http.StatusOK, jsonContentType, ans)
}

// refuse answers a request the emulator will not serve, and counts it.
func (e *Emulator) refuse(w http.ResponseWriter, status int, msg string) {
	e.faults.Reject(status)
	writeError(w, status, msg)
}

// log logs an answered call when the emulator has a logger.
func (e *Emulator) log(c Received) {
	if e.cfg.Logger != nil {
		e.cfg.Logger.Info("recommend emulator: fetch answered", "campaign", c.Campaign, "run", c.Run,
			"users", len(c.UserIDs), "status", c.Status)
	}
}

// writeError answers {"error": msg} with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	emulator.WriteJSON(w, status, jsonContentType, map[string]string{"error": msg})
}

// handlePutUser is PUT /emulator/users/{id}: the body is the UserContent
// every answer then gives that user.
func (e *Emulator) handlePutUser(w http.ResponseWriter, r *http.Request) {
	body, _, ok := emulator.ReadBody(w, r, maxRequestBytes)
	if !ok {
		writeError(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	var c UserContent
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		writeError(w, http.StatusBadRequest, "invalid user content: "+err.Error())
		return
	}
	e.SetUser(r.PathValue("id"), c)
	w.WriteHeader(http.StatusNoContent)
}
