package kafkaapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// checkKeys refuses what encoding/json lets through in a record it has
// already decoded into a value of type t: a key given twice in one object
// (the last one wins, so a reader of the first sees another record than
// Herald does) and a struct field's key in another case than its own
// ("UserId" for userId), at any depth — as the HTTP API refuses both in a
// body. Map keys (data) are free but for duplicates.
func checkKeys(b []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return walkKeys(dec, "", t)
}

// walkKeys reads one value from dec; path names it, t is the Go type it
// decodes into (nil: anything).
func walkKeys(dec *json.Decoder, path string, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		fields := jsonFields(t)
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return fmt.Errorf("%s: is given twice", at)
			}
			seen[key] = true
			var elem reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return fmt.Errorf("%s: must be written %q", at, name)
						}
					}
				}
				elem = ft
			case t != nil && t.Kind() == reflect.Map:
				elem = t.Elem()
			}
			if err := walkKeys(dec, at, elem); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s[%d]", path, i), elem); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

// jsonFields maps a struct's JSON keys to their types; nil for another
// kind of type.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
