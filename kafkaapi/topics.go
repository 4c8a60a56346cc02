package kafkaapi

import (
	"context"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Kind says what a topic carries.
type Kind string

const (
	// KindEvents: business events, applied with Client.Track — the one
	// engine behind POST /v1/events too. JSON or Avro; Topic.Shape says
	// how a record becomes a herald.Event.
	KindEvents Kind = herald.RecordEvents
	// KindNotifications: notification requests, seed 003's
	// NotificationEvent as JSON or Avro, enqueued like POST
	// /v1/notifications and idempotent by notificationId.
	KindNotifications Kind = herald.RecordNotifications
	// KindInterests: a behaviour topic — interests (POST /v1/interests'
	// single form as JSON), recorded with Client.RecordInterests; a
	// replayed record changes nothing (the later time wins).
	KindInterests Kind = herald.RecordInterests
)

// String is the kind's name.
func (k Kind) String() string { return string(k) }

// Shape says how an event topic's record becomes a herald.Event.
type Shape string

const (
	// ShapeEvent: the record is a herald.Event — POST /v1/events' body
	// (id, name, user_id, subject, data, occurred_at, version), strictly:
	// an unknown field is a decode error. JSON only; the default of a
	// JSON event topic.
	ShapeEvent Shape = "event"
	// ShapeFields: the record is any flat record — seed 003's
	// ProductInventoryEvent — mapped to a herald.Event by its field
	// names (Topic.Fields). The default, and the only shape, of an Avro
	// event topic: an Avro schema is the producer's, not Herald's.
	ShapeFields Shape = "fields"
)

// Topic is one topic the consumer reads.
type Topic struct {
	Name string
	Kind Kind
	// Encoding of the record values; default EncodingJSON. Notification
	// and event topics take Avro too (seed 003 publishes NotificationEvent
	// and ProductInventoryEvent as Avro); interest topics take JSON.
	Encoding Encoding
	// Schema, with EncodingAvro, is the fixed writer schema (.avsc text)
	// of raw Avro values; empty: the Confluent wire format and the
	// schema registry.
	Schema string
	// Shape, on an event topic, says how a record becomes a herald.Event;
	// default ShapeEvent for JSON, ShapeFields for Avro.
	Shape Shape
	// Fields, with ShapeFields, names the record's fields that give the
	// event its own; an empty one takes DefaultEventFields' (seed 003's).
	Fields EventFields
}

// topicReader is how the consumer reads one topic: what it carries, how
// its values decode, and (an event topic with ShapeFields) how a record
// maps to a herald.Event.
type topicReader struct {
	kind    Kind
	dec     decoder
	mapping *eventMapping
}

// event decodes an event topic's record into the herald.Event handed to
// Client.Track: named by the record's position when it names itself
// nowhere, and carrying its topic (a rule's source).
func (t *topicReader) event(ctx context.Context, r *kgo.Record) (herald.Event, error) {
	var e herald.Event
	if t.mapping == nil {
		var err error
		if e, err = decodeEvent(r); err != nil {
			return herald.Event{}, err
		}
	} else {
		var rec map[string]any
		if err := t.dec.decode(ctx, r.Value, &rec); err != nil {
			return herald.Event{}, err
		}
		var err error
		if e, err = t.mapping.event(rec); err != nil {
			return herald.Event{}, &decodeError{err}
		}
	}
	if e.ID == "" {
		e.ID = recordID(r)
	}
	e.Topic = r.Topic
	return e, nil
}

// readers builds topic readers, sharing one schema-registry client (and
// its cache) between the Avro topics that need one.
type readers struct {
	registryURL string
	registry    *avroRegistry
}

// reader checks t, a topic's settings named field in errors and what in
// prose, and builds its reader.
func (b *readers) reader(field, what string, t Topic) (*topicReader, error) {
	switch t.Kind {
	case KindEvents, KindNotifications, KindInterests:
	default:
		return nil, heraldtype.FieldErrorf(field+".kind", "must be %q, %q or %q, not %q", KindEvents, KindNotifications, KindInterests, t.Kind)
	}
	rd := &topicReader{kind: t.Kind}
	switch {
	case t.Encoding == "" || t.Encoding == EncodingJSON:
		rd.dec = jsonDecoder{}
	case t.Encoding != EncodingAvro:
		return nil, heraldtype.FieldErrorf(field+".encoding", "must be %q or %q, not %q", EncodingJSON, EncodingAvro, t.Encoding)
	case t.Kind == KindInterests:
		return nil, heraldtype.FieldErrorf(field+".encoding", "an %s topic takes json", t.Kind)
	case t.Schema != "":
		schema, err := avro.Parse(t.Schema)
		if err != nil {
			return nil, heraldtype.FieldErrorf(field+".schema", "does not parse: %v", err)
		}
		rd.dec = avroFixed{schema}
	default:
		reg, err := b.avroRegistry(what)
		if err != nil {
			return nil, err
		}
		rd.dec = reg
	}
	if t.Kind != KindEvents {
		if t.Shape != "" {
			return nil, heraldtype.FieldErrorf(field+".shape", "is for event topics; a %s topic has its own", t.Kind)
		}
		return rd, nil
	}
	shape := t.Shape
	if shape == "" {
		shape = ShapeEvent
		if t.Encoding == EncodingAvro {
			shape = ShapeFields
		}
	}
	switch shape {
	case ShapeEvent:
		if t.Encoding == EncodingAvro {
			return nil, heraldtype.FieldErrorf(field+".shape", "an avro topic maps its records by field names: %q", ShapeFields)
		}
	case ShapeFields:
		m, err := newEventMapping(field+".fields", t.Fields)
		if err != nil {
			return nil, err
		}
		rd.mapping = m
	default:
		return nil, heraldtype.FieldErrorf(field+".shape", "must be %q or %q, not %q", ShapeEvent, ShapeFields, shape)
	}
	return rd, nil
}

// avroRegistry is the shared registry decoder, created on first use by
// what (a topic, in prose).
func (b *readers) avroRegistry(what string) (*avroRegistry, error) {
	if b.registry != nil {
		return b.registry, nil
	}
	if b.registryURL == "" {
		return nil, heraldtype.FieldErrorf("kafka.schema_registry_url", "is required to read %s as avro (or give a fixed schema)", what)
	}
	rc, err := sr.NewClient(sr.URLs(b.registryURL))
	if err != nil {
		return nil, heraldtype.FieldErrorf("kafka.schema_registry_url", "%v", err)
	}
	b.registry = &avroRegistry{client: rc, cache: map[int]avro.Schema{}}
	return b.registry, nil
}
