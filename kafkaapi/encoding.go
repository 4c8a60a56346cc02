package kafkaapi

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// Encoding is how a topic's record values are written (issue 20 item 8).
type Encoding string

const (
	// EncodingJSON: one JSON object per record (the default).
	EncodingJSON Encoding = "json"
	// EncodingAvro: Avro binary. With a Topic.Schema, raw Avro written
	// with that fixed schema; without, the Confluent wire format — a zero
	// magic byte, the schema's registry id (4 bytes, big endian), then
	// the Avro binary — whose writer schema is fetched from the schema
	// registry (Config.SchemaRegistryURL) and cached by id.
	EncodingAvro Encoding = "avro"
)

// Schemas are seed 003's Avro schemas, shipped as examples and used by
// the tests: NotificationEvent.avsc (a notification request) and
// ProductInventoryEvent.avsc (a product's price and stock change).
//
//go:embed schemas/*.avsc
var Schemas embed.FS

// decoder turns a record value into v (a NotificationEvent).
type decoder interface {
	decode(ctx context.Context, value []byte, v any) error
}

type jsonDecoder struct{}

func (jsonDecoder) decode(_ context.Context, b []byte, v any) error {
	if err := strictJSON(b, v, ""); err != nil {
		return &decodeError{err}
	}
	return nil
}

// avroFixed decodes raw Avro binary written with one known schema.
type avroFixed struct{ schema avro.Schema }

func (d avroFixed) decode(_ context.Context, b []byte, v any) error {
	if err := avroUnmarshal(d.schema, b, v); err != nil {
		return &decodeError{fmt.Errorf("avro: %w", err)}
	}
	return nil
}

// avroUnmarshal decodes b, one value of schema, into v, and fails unless
// it is exactly that: avro.Unmarshal takes a value cut short as whole
// (its reader's end of input is not an error) and ignores what follows
// it, so a record cut through its timestamp became an event of version 0
// (issue 30 item 2). Strings must be valid UTF-8, as the HTTP API's are
// (issue 31 item 6).
func avroUnmarshal(schema avro.Schema, b []byte, v any) error {
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(avroDecoding))
	r.Reset(b)
	r.ReadVal(schema, v)
	if r.Error != nil {
		if errors.Is(r.Error, io.EOF) || errors.Is(r.Error, io.ErrUnexpectedEOF) {
			return fmt.Errorf("the record ends early: %d bytes are not a whole %s", len(b), schemaName(schema))
		}
		return avroError(r.Error)
	}
	if r.Peek(); r.Error == nil {
		return fmt.Errorf("there are bytes after the end of the %s (%d bytes in all)", schemaName(schema), len(b))
	}
	return checkUTF8(v)
}

// maxAvroItems bounds the items of one Avro array a record may declare.
// An array's block header is a count the decoder allocates for before it
// reads a single item, and hamba/avro's default bound is the largest heap
// allocation there is: a 60-byte record claiming 10^13 items took the
// process down (found by FuzzDecodeRecord). A Kafka record that holds an
// array of a million items is not a notification request or an event.
const maxAvroItems = 1 << 20

// avroDecoding is the Avro configuration every record is read with:
// strings and bytes up to 1 MiB each (the library's default, stated) and
// arrays up to maxAvroItems.
var avroDecoding = avro.Config{MaxByteSliceSize: 1 << 20, MaxSliceAllocSize: maxAvroItems}.Freeze()

// schemaName is a schema's name as an error gives it: a record's name, or
// its type (string, map, …).
func schemaName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.Name() + " record"
	}
	return string(s.Type()) + " value"
}

// avroRegistry decodes the Confluent wire format, with writer schemas
// from the registry, cached by id (a schema under an id never changes).
type avroRegistry struct {
	client *sr.Client
	mu     sync.Mutex
	cache  map[int]avro.Schema
}

func (d *avroRegistry) decode(ctx context.Context, b []byte, v any) error {
	var h sr.ConfluentHeader
	id, payload, err := h.DecodeID(b)
	if err != nil {
		return &decodeError{fmt.Errorf("avro: not the schema registry's wire format (magic byte 0 and a schema id): %w", err)}
	}
	schema, err := d.schema(ctx, id)
	if err != nil {
		return err
	}
	if err := avroUnmarshal(schema, payload, v); err != nil {
		return &decodeError{fmt.Errorf("avro (schema id %d): %w", id, err)}
	}
	return nil
}

// schema returns the writer schema of id. An id the registry does not
// know is a decode error (dead-lettered); a registry that does not answer
// is a plain error (retried).
func (d *avroRegistry) schema(ctx context.Context, id int) (avro.Schema, error) {
	d.mu.Lock()
	s, ok := d.cache[id]
	d.mu.Unlock()
	if ok {
		return s, nil
	}
	ss, err := d.client.SchemaByID(ctx, id)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == 404 {
			return nil, &decodeError{fmt.Errorf("avro: schema id %d is not in the registry", id)}
		}
		return nil, fmt.Errorf("schema registry: schema id %d: %w", id, err)
	}
	if ss.Type != sr.TypeAvro {
		return nil, &decodeError{fmt.Errorf("schema id %d is %s, not Avro", id, ss.Type)}
	}
	s, err = avro.Parse(ss.Schema)
	if err != nil {
		return nil, &decodeError{fmt.Errorf("schema id %d does not parse: %w", id, err)}
	}
	d.mu.Lock()
	d.cache[id] = s
	d.mu.Unlock()
	return s, nil
}
