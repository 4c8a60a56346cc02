package kafkaapi

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// decodeError is a record that cannot be decoded: retrying cannot help,
// it is dead-lettered at once with the reason.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decode: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// recordID names a record when its payload carries no id of its own:
// topic:partition:offset, unique in the cluster for as long as the topic
// lives (S3.1). A Kafka topic name holds no colon.
func recordID(r *kgo.Record) string {
	return r.Topic + ":" + strconv.Itoa(int(r.Partition)) + ":" + strconv.FormatInt(r.Offset, 10)
}

// NotificationEvent is seed 003's notification request (its Avro record
// NotificationEvent, here as JSON): another service asks Herald to send
// one notification to one user. Enum values are the seed's upper case
// (PRICE_DROP, PUSH, HIGH); Herald's type is the notificationType in lower
// case (price_drop), its channels likewise.
type NotificationEvent struct {
	NotificationID   string            `json:"notificationId" avro:"notificationId"`
	UserID           string            `json:"userId" avro:"userId"`
	ProductID        string            `json:"productId,omitempty" avro:"productId"`
	NotificationType string            `json:"notificationType" avro:"notificationType"`
	Title            string            `json:"title" avro:"title"`
	Body             string            `json:"body" avro:"body"`
	Data             map[string]string `json:"data,omitempty" avro:"data"`
	Channels         []string          `json:"channels,omitempty" avro:"channels"`
	Priority         string            `json:"priority,omitempty" avro:"priority"`
	// Timestamp is epoch milliseconds; informational.
	Timestamp int64 `json:"timestamp,omitempty" avro:"timestamp"`
}

// decodeNotificationRequest turns a NotificationEvent record into the
// trigger POST /v1/notifications would make of it, idempotent by its
// notificationId (else the record's position). The product, when named,
// is the de-duplication subject (S3.8: user × product × type) and is
// added to the data as productId.
func decodeNotificationRequest(ctx context.Context, dec decoder, r *kgo.Record) (herald.Request, error) {
	var ev NotificationEvent
	if err := dec.decode(ctx, r.Value, &ev); err != nil {
		return herald.Request{}, err
	}
	key := ev.NotificationID
	if key == "" {
		key = recordID(r)
	}
	req := herald.Request{
		IdempotencyKey: key, IdempotencyNamespace: herald.TopicNamespace(r.Topic),
		UserID: ev.UserID, Type: strings.ToLower(ev.NotificationType), Title: ev.Title, Body: ev.Body,
		Data: ev.Data, Priority: heraldtype.Priority(strings.ToUpper(ev.Priority)), DedupeKey: ev.ProductID,
	}
	if ev.ProductID != "" {
		if _, set := req.Data["productId"]; !set {
			data := make(map[string]string, len(ev.Data)+1)
			for k, v := range ev.Data {
				data[k] = v
			}
			data["productId"] = ev.ProductID
			req.Data = data
		}
	}
	for _, ch := range ev.Channels {
		req.Channels = append(req.Channels, heraldtype.Channel(strings.ToLower(ch)))
	}
	return req, nil
}

// eventJSON is herald.Event as it travels on an events topic. Data values
// may be any JSON scalar (a product system's prices are numbers); they are
// kept as their JSON text (8500, true) or the string itself.
type eventJSON struct {
	ID         string                     `json:"id"`
	Name       string                     `json:"name"`
	UserID     string                     `json:"user_id"`
	Subject    string                     `json:"subject"`
	Data       map[string]json.RawMessage `json:"data"`
	OccurredAt *time.Time                 `json:"occurred_at"`
	Version    int64                      `json:"version"`
	// CancellationKey cancels the notifications triggered with it, as
	// POST /v1/events' does.
	CancellationKey string `json:"cancellation_key"`
}

// decodeEvent turns the record of an events topic of ShapeEvent into a
// herald.Event.
func decodeEvent(r *kgo.Record) (herald.Event, error) {
	var ej eventJSON
	if err := strictJSON(r.Value, &ej, "occurred_at"); err != nil {
		return herald.Event{}, &decodeError{err}
	}
	e := herald.Event{ID: ej.ID, Name: ej.Name, UserID: ej.UserID, Subject: ej.Subject, OccurredAt: ej.OccurredAt, Version: ej.Version,
		CancellationKey: ej.CancellationKey}
	data, err := herald.EventDataFromJSON(ej.Data)
	if err != nil {
		return herald.Event{}, &decodeError{err}
	}
	e.Data = data
	return e, nil
}
