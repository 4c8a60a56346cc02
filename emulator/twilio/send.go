package twilio

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// maxRequestBytes bounds a create request's body; a 1600-character body
// form-encodes to well under it.
const maxRequestBytes = 64 << 10

// messageResource is Twilio's Message resource, as answered by create.
type messageResource struct {
	AccountSID          string  `json:"account_sid"`
	APIVersion          string  `json:"api_version"`
	Body                string  `json:"body"`
	DateCreated         string  `json:"date_created"`
	DateSent            *string `json:"date_sent"`
	DateUpdated         string  `json:"date_updated"`
	Direction           string  `json:"direction"`
	ErrorCode           *int    `json:"error_code"`
	ErrorMessage        *string `json:"error_message"`
	From                *string `json:"from"`
	MessagingServiceSID *string `json:"messaging_service_sid"`
	NumMedia            string  `json:"num_media"`
	NumSegments         string  `json:"num_segments"`
	Price               *string `json:"price"`
	PriceUnit           string  `json:"price_unit"`
	SID                 string  `json:"sid"`
	Status              string  `json:"status"`
	To                  string  `json:"to"`
	URI                 string  `json:"uri"`
}

// handleCreate is POST /2010-04-01/Accounts/{AccountSid}/Messages.json.
func (e *Emulator) handleCreate(w http.ResponseWriter, r *http.Request) {
	account := r.PathValue("account")
	user, pass, ok := r.BasicAuth()
	if !ok || !e.authenticated(user, pass) {
		e.faults.Reject(ErrAuthenticate)
		writeTwilioError(w, ErrAuthenticate, 0, "")
		return
	}
	if account != e.cfg.AccountSID {
		// Authenticated, but for another account than the path names.
		e.faults.Reject(ErrNotFound)
		writeTwilioError(w, ErrNotFound, 0, "")
		return
	}
	if !e.faults.Wait(r.Context()) {
		return
	}

	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	if err := r.ParseForm(); err != nil {
		// Twilio reads only form bodies; anything else leaves To unset.
		e.faults.Reject(ErrToRequired)
		writeTwilioError(w, ErrToRequired, 0, "")
		return
	}
	to, from, service := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("MessagingServiceSid")
	body, callback := r.PostForm.Get("Body"), r.PostForm.Get("StatusCallback")
	if code, detail := e.checkCreate(to, from, service, body, callback); code != 0 {
		e.faults.Reject(code)
		writeTwilioError(w, code, 0, detail)
		return
	}

	now := e.cfg.Now()
	if inj, fail := e.pickFault(to, now); fail {
		writeFault(w, inj)
		return
	}
	status := "queued"
	if service != "" {
		status = "accepted" // a Messaging Service picks the sender first
	}
	msg := Received{
		SID: newSID(), AccountSID: account, To: to, From: from, MessagingServiceSID: service,
		Body: body, StatusCallback: callback, ReceivedAt: now, Status: status,
	}
	e.faults.Accept()
	e.rec.Record(msg)
	e.mu.Lock()
	// The callbacks are counted under e.mu so that Close, which sets
	// closed under e.mu before waiting, never races a late Add.
	spawn := callback != "" && !e.closed
	if spawn {
		e.callbacks.Add(1)
	}
	e.mu.Unlock()
	if e.cfg.Logger != nil {
		e.cfg.Logger.Info("twilio emulator: SMS accepted", "sid", msg.SID, "to", to, "from", from,
			"messaging_service_sid", service, "body", body)
	}
	if spawn {
		go e.runCallbacks(msg)
	}
	writeJSON(w, http.StatusCreated, resource(msg, now))
}

// authenticated reports whether user and pass are the account's SID and
// auth token, or its API key's SID and secret (Twilio accepts both; the
// account is then the one in the path).
func (e *Emulator) authenticated(user, pass string) bool {
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	return eq(user, e.cfg.AccountSID) && eq(pass, e.cfg.AuthToken) ||
		eq(user, e.cfg.APIKeySID) && eq(pass, e.cfg.APIKeySecret)
}

// checkCreate validates a create request as Twilio does and returns the
// error code and detail to answer, or 0.
func (e *Emulator) checkCreate(to, from, service, body, callback string) (int, string) {
	switch {
	case to == "":
		return ErrToRequired, ""
	case !validE164(to):
		return ErrInvalidTo, to
	case from == "" && service == "":
		return ErrFromRequired, ""
	case service != "" && (len(service) != 34 || service[:2] != "MG"):
		return ErrMessagingServiceSID, service
	case from != "" && len(e.cfg.FromNumbers) > 0 && !slices.Contains(e.cfg.FromNumbers, from):
		return ErrFromNotCapable, ""
	case body == "":
		return ErrBodyRequired, ""
	case bodyLen(body) > MaxBodyChars:
		return ErrBodyTooLong, ""
	case callback != "" && !httpURL(callback):
		return ErrStatusCallback, callback
	}
	return 0, ""
}

// resource is the 201 answer for msg.
func resource(msg Received, now time.Time) messageResource {
	date := now.UTC().Format(time.RFC1123Z)
	res := messageResource{
		AccountSID: msg.AccountSID, APIVersion: "2010-04-01", Body: msg.Body,
		DateCreated: date, DateUpdated: date, Direction: "outbound-api",
		NumMedia: "0", NumSegments: strconv.Itoa(segments(msg.Body)), PriceUnit: "USD",
		SID: msg.SID, Status: msg.Status, To: msg.To,
		URI: "/2010-04-01/Accounts/" + msg.AccountSID + "/Messages/" + msg.SID + ".json",
	}
	if msg.From != "" {
		res.From = &msg.From
	}
	if msg.MessagingServiceSID != "" {
		res.MessagingServiceSID = &msg.MessagingServiceSID
	}
	return res
}

// segments estimates how many SMS segments body takes: 160 characters in
// one, 153 per segment once concatenated (GSM-7); 70 and 67 if any
// character needs UCS-2. Only the answer's num_segments uses it.
func segments(body string) int {
	single, multi := 160, 153
	for _, r := range body {
		if r > 0x7f {
			single, multi = 70, 67
			break
		}
	}
	n := bodyLen(body)
	if n <= single {
		return 1
	}
	return (n + multi - 1) / multi
}

// Messages returns the accepted messages, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the accepted messages sent to number, oldest first.
func (e *Emulator) MessagesTo(number string) []Received {
	return e.rec.Where(func(m Received) bool { return m.To == number })
}
