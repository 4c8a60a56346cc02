package emulator

import (
	"encoding/json"
	"net/http"
)

// WriteJSON answers v as JSON with the given Content-Type (each emulator
// uses the exact header its provider sends).
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client hung up; nothing to do.
}

// maxFaultsBody bounds a PUT /emulator/faults body.
const maxFaultsBody = 1 << 20

// Emulator is what every emulator offers test harnesses in Go, and what
// its control routes drive. M is its recorded message type, F its faults
// and S its stats.
type Emulator[M, F, S any] interface {
	Messages() []M
	MessagesTo(string) []M
	Reset()
	CurrentFaults() F
	SetFaults(F) error
	ClearFaults()
	Stats() S
}

// Control is an emulator's side of the control routes every emulator
// serves to test harnesses and `herald emulate`:
//
//	GET    /emulator/messages[?<Filter>=]  recorded messages (a JSON array, never null)
//	DELETE /emulator/messages              Reset
//	GET    /emulator/faults                CurrentFaults
//	PUT    /emulator/faults                SetFaults (unknown fields refused), answering CurrentFaults
//	DELETE /emulator/faults                ClearFaults
//	GET    /emulator/stats                 Stats
type Control[M, F, S any] struct {
	Emulator Emulator[M, F, S]
	// ContentType is the Content-Type of JSON answers.
	ContentType string
	// Filter names the query parameter of GET /emulator/messages whose
	// value is passed to MessagesTo ("token", "to", "endpoint").
	Filter string
}

// Register adds the control routes to mux.
func (c Control[M, F, S]) Register(mux *http.ServeMux) {
	e := c.Emulator
	mux.HandleFunc("GET /emulator/messages", c.listMessages)
	mux.HandleFunc("DELETE /emulator/messages", func(w http.ResponseWriter, _ *http.Request) {
		e.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, c.ContentType, e.CurrentFaults())
	})
	mux.HandleFunc("PUT /emulator/faults", c.putFaults)
	mux.HandleFunc("DELETE /emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		e.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /emulator/stats", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, c.ContentType, e.Stats())
	})
}

func (c Control[M, F, S]) listMessages(w http.ResponseWriter, r *http.Request) {
	var msgs []M
	if v := r.URL.Query().Get(c.Filter); v != "" {
		msgs = c.Emulator.MessagesTo(v)
	} else {
		msgs = c.Emulator.Messages()
	}
	if msgs == nil {
		msgs = []M{} // a JSON array, never null, for jq and other languages
	}
	WriteJSON(w, http.StatusOK, c.ContentType, msgs)
}

func (c Control[M, F, S]) putFaults(w http.ResponseWriter, r *http.Request) {
	var f F
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxFaultsBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		WriteJSON(w, http.StatusBadRequest, c.ContentType, map[string]string{"error": "invalid faults JSON: " + err.Error()})
		return
	}
	if err := c.Emulator.SetFaults(f); err != nil {
		WriteJSON(w, http.StatusBadRequest, c.ContentType, map[string]string{"error": err.Error()})
		return
	}
	WriteJSON(w, http.StatusOK, c.ContentType, c.Emulator.CurrentFaults())
}
