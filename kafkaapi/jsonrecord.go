package kafkaapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/internal/jsonkind"
)

// strictJSON decodes a record value that must be one JSON object into v,
// refusing unknown fields and anything after the object, so a producer's
// typo is a dead letter naming the field rather than a silently ignored
// value. Invalid UTF-8 is refused as the HTTP API refuses it: encoding/json
// would replace it with U+FFFD and Herald would send text nobody wrote
// (issue 31 item 6). A number decoded into an any keeps its text
// (json.Number): a record mapped by its fields carries 1764000000000 and
// 10000 as written. timeField names v's time field, if it has one:
// encoding/json does not say which field a time failed to parse in.
//
// A key given twice, or a field's key in another case than its own, is
// refused too (checkKeys).
//
// Every error is in the producer's words — the field's path and the JSON
// kind it must be — never a Go type name (issue 30 item 2).
func strictJSON(b []byte, v any, timeField string) error {
	if !utf8.Valid(b) {
		return errors.New("the record is not valid UTF-8")
	}
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if len(trimmed) == 0 {
		return errors.New("the record holds no JSON object")
	}
	if trimmed[0] != '{' {
		return errors.New("the record must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, timeField)
	}
	// Exactly one value: `{…}}` or `{…} x` is a producer's bug that would
	// otherwise be half applied (Decoder.More misses a stray '}').
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("the record must hold exactly one JSON object; there is data after it")
	}
	return checkKeys(b, reflect.TypeOf(v))
}

// jsonError says what encoding/json found wrong, naming the field.
func jsonError(err error, timeField string) error {
	var (
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		timeFail *time.ParseError
	)
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("the record is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the record is not valid JSON: it ends in the middle of a value")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errors.New("the record must be a JSON object")
		}
		return fmt.Errorf("%s: must be %s, not %s", typ.Field, jsonkind.Of(typ.Type), typ.Value)
	case errors.As(err, &timeFail) || strings.Contains(err.Error(), "Time.UnmarshalJSON"):
		if timeField == "" {
			return errors.New("a time must be an RFC 3339 time such as 2026-05-01T09:00:00+09:00")
		}
		return fmt.Errorf("%s: must be an RFC 3339 time such as 2026-05-01T09:00:00+09:00", timeField)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("%s: is not a known field", strings.Trim(name, `"`))
	}
	return fmt.Errorf("the record is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
}
