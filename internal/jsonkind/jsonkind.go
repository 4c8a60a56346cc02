// Package jsonkind names a Go type the way a JSON caller thinks of it ("a
// string", "an integer", "an RFC 3339 time string"), for the decode errors
// of both transports: the HTTP API's bodies and the Kafka intake's records
// say a field's wrong type in the same words.
package jsonkind

import (
	"reflect"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Of names t as JSON: what a value of t must be.
func Of(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 time string"
	}
	if t == reflect.TypeFor[heraldtype.Duration]() {
		return `a duration such as "90m" or "48h"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return Of(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a different type"
}
