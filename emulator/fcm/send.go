package fcm

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/internal/jsonenc"
)

// maxRequestBytes bounds a send request's body. FCM's payload limit is far
// below it; the bound only keeps a broken client from exhausting memory.
const maxRequestBytes = 1 << 20

// sendRequest is a validated messages:send body.
type sendRequest struct {
	validateOnly bool
	message      json.RawMessage
	token        string
	topic        string
	condition    string
}

// handleSend is POST /v1/projects/{project}/messages:send.
func (e *Emulator) handleSend(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	if !e.authorize(w, r, project) {
		return
	}
	if !e.faults.Wait(r.Context()) {
		return
	}

	body, tooLarge, ok := emulator.ReadBody(w, r, maxRequestBytes)
	if !ok {
		if tooLarge {
			e.faults.Reject("INVALID_ARGUMENT")
			writeGoogleError(w, *tooBig())
		}
		return
	}
	req, gerr := parseSend(body)
	if gerr != nil {
		e.faults.Reject(rejectCode(gerr))
		writeGoogleError(w, *gerr)
		return
	}

	if !e.knownToken(req.token) {
		ge := unregisteredError()
		e.faults.Reject(CodeUnregistered)
		writeGoogleError(w, ge)
		return
	}

	now := e.cfg.Now()
	if inj, fail := e.faults.Pick(req.token, now, nil); fail {
		writeFault(w, inj, now)
		return
	}
	id := e.nextMessageID(now)
	rec := Received{
		Project: project, MessageID: id, Token: req.token, Topic: req.topic, Condition: req.condition,
		ReceivedAt: now, Message: req.message,
	}
	if !req.validateOnly {
		e.faults.Accept()
		e.rec.Record(rec)
	}
	if e.cfg.OnAccept != nil && !req.validateOnly {
		e.cfg.OnAccept(rec)
	}
	if e.cfg.Logger != nil && !req.validateOnly {
		e.cfg.Logger.Info("fcm emulator: message accepted", "project", project, "message_id", id,
			"token", req.token, "topic", req.topic, "message", req.message)
	}

	name := make([]byte, 0, 64+len(project)+len(id))
	name = append(name, `{"name":`...)
	name = jsonenc.AppendString(name, "projects/"+project+"/messages/"+id)
	name = append(name, '}')
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(name) //nolint:errcheck // the client hung up; nothing to do.
}

// parseSend validates a messages:send body as FCM does, closely enough that
// a message the emulator accepts is one FCM accepts.
func parseSend(body []byte) (*sendRequest, *googleError) {
	if !json.Valid(body) {
		// encoding/json names the syntax error's offset.
		var probe map[string]json.RawMessage
		return nil, invalidPayload(json.Unmarshal(body, &probe))
	}
	// Every object below is a part of a valid document: splitObject may
	// split it (emulator_json.go).
	top, gerr := object(body, "", fieldsRequest)
	if gerr != nil {
		return nil, gerr
	}
	req := &sendRequest{}
	if v, ok := pick(top, "validate_only"); ok {
		if json.Unmarshal(v, &req.validateOnly) != nil {
			return nil, badRequest("validate_only", "Invalid value at 'validate_only' (TYPE_BOOL), "+string(v))
		}
	}
	raw, ok := top["message"]
	if !ok {
		return nil, invalidArgument("message", "Recipient of the message is not set.")
	}
	req.message = raw
	msg, gerr := object(raw, "message", fieldsMessage)
	if gerr != nil {
		return nil, gerr
	}
	if gerr := req.target(msg); gerr != nil {
		return nil, gerr
	}
	data, gerr := stringMap(msg["data"], "message.data")
	if gerr != nil {
		return nil, gerr
	}
	for k := range data {
		if reservedDataKey(k) {
			return nil, invalidArgument("message.data", "Invalid data payload key: "+k)
		}
	}
	var title, bodyText, image string
	if raw, ok := msg["notification"]; ok {
		n, gerr := object(raw, "message.notification", fieldsNotification)
		if gerr != nil {
			return nil, gerr
		}
		for field, dst := range map[string]*string{"title": &title, "body": &bodyText, "image": &image} {
			if gerr := stringField(n, field, "message.notification."+field, dst); gerr != nil {
				return nil, gerr
			}
		}
	}
	if payloadSize(data, title, bodyText, image) > MaxPayloadBytes {
		return nil, tooBig()
	}
	if raw, ok := msg["android"]; ok {
		if gerr := checkAndroid(raw); gerr != nil {
			return nil, gerr
		}
	}
	if raw, ok := msg["apns"]; ok {
		if gerr := checkAPNS(raw); gerr != nil {
			return nil, gerr
		}
	}
	if raw, ok := msg["webpush"]; ok {
		if gerr := checkWebpush(raw); gerr != nil {
			return nil, gerr
		}
	}
	if raw, ok := pick(msg, "fcm_options"); ok {
		if _, gerr := object(raw, "message.fcm_options", fieldsFCMOptions); gerr != nil {
			return nil, gerr
		}
	}
	return req, nil
}

// target checks that exactly one of token, topic and condition is set
// (a proto oneof).
func (req *sendRequest) target(msg map[string]json.RawMessage) *googleError {
	set := ""
	for _, name := range []string{"token", "topic", "condition"} {
		raw, ok := msg[name]
		if !ok {
			continue
		}
		if set != "" {
			return badRequest("message", "Invalid value at 'message' (oneof field 'target' is already set. Cannot set '"+name+"')")
		}
		set = name
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return badRequest("message."+name, "Invalid value at 'message."+name+"' (TYPE_STRING), "+string(raw))
		}
		switch name {
		case "token":
			if !ValidRegistrationToken(v) {
				ge := invalidTokenError()
				return &ge
			}
			req.token = v
		case "topic":
			if !validTopic(v) {
				return invalidArgument("message.topic", "Invalid topic name: "+v)
			}
			req.topic = v
		case "condition":
			if v == "" {
				return invalidArgument("message.condition", "Invalid condition expression provided.")
			}
			req.condition = v
		}
	}
	if set == "" {
		return invalidArgument("message", "Recipient of the message is not set.")
	}
	return nil
}

// validTopic reports whether t (optionally prefixed "/topics/") matches FCM's
// topic pattern [a-zA-Z0-9-_.~%]+.
func validTopic(t string) bool {
	if len(t) > 8 && t[:8] == "/topics/" {
		t = t[8:]
	}
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '%') {
			return false
		}
	}
	return true
}

// Messages returns the accepted messages, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the accepted messages sent to token, oldest first.
func (e *Emulator) MessagesTo(token string) []Received {
	return e.rec.Where(func(m Received) bool { return m.Token == token })
}
