package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Whole-path field errors (issue 32 item 5). encoding/json names an
// unknown field by its last key only ("disabld", not
// "types.promo.disabld") and a value of the wrong type by its struct
// fields without the map keys between them ("types.disabled"). When a
// decode fails so, badValue walks the body again beside the destination's
// type and finds the first member that is unknown or does not decode, by
// its whole path. It runs only on that error path, so it may allocate.

// badValue is what badValue found: the member's path (keys joined by
// dots, array indexes in brackets), whether it is an unknown field, and
// otherwise the error decoding it gave with the type it should have been.
type badValue struct {
	path    string
	unknown bool
	err     error
	typ     reflect.Type
}

// findBadValue returns the first member of body (valid JSON) that an
// encoding/json decode into t refuses; ok is false if none is found.
func findBadValue(body []byte, t reflect.Type) (badValue, bool) {
	return walkValue(body, t, "")
}

func walkValue(raw []byte, t reflect.Type, path string) (badValue, bool) {
	for t.Kind() == reflect.Pointer && !decodesItself(t) {
		t = t.Elem()
	}
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return badValue{}, false // null decodes into anything
	}
	if !decodesItself(t) {
		switch t.Kind() {
		case reflect.Struct:
			if bv, ok, walked := walkStruct(raw, t, path); walked {
				return bv, ok
			}
		case reflect.Map:
			if bv, ok, walked := walkMap(raw, t, path); walked {
				return bv, ok
			}
		case reflect.Slice, reflect.Array:
			if bv, ok, walked := walkArray(raw, t, path); walked {
				return bv, ok
			}
		}
	}
	// A leaf, or a container of the wrong JSON kind: decode it alone.
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		return badValue{path: path, err: err, typ: t}, true
	}
	return badValue{}, false
}

// walkStruct checks the members of an object decoded into struct t;
// walked is false if raw is not an object.
func walkStruct(raw []byte, t reflect.Type, path string) (bv badValue, ok, walked bool) {
	members, isObject := objectMembers(raw)
	if !isObject {
		return badValue{}, false, false
	}
	fields := structFields(t)
	for _, m := range members {
		ft, known := fields[m.key]
		if !known {
			// encoding/json matches a key to a field ignoring case.
			for name, typ := range fields {
				if strings.EqualFold(name, m.key) {
					ft, known = typ, true
					break
				}
			}
		}
		p := join(path, m.key)
		if !known {
			return badValue{path: p, unknown: true}, true, true
		}
		if bv, ok := walkValue(m.value, ft, p); ok {
			return bv, true, true
		}
	}
	return badValue{}, false, true
}

// walkMap checks the values of an object decoded into map t.
func walkMap(raw []byte, t reflect.Type, path string) (bv badValue, ok, walked bool) {
	members, isObject := objectMembers(raw)
	if !isObject {
		return badValue{}, false, false
	}
	for _, m := range members {
		if bv, ok := walkValue(m.value, t.Elem(), join(path, m.key)); ok {
			return bv, true, true
		}
	}
	return badValue{}, false, true
}

// walkArray checks the elements of an array decoded into slice or array t.
func walkArray(raw []byte, t reflect.Type, path string) (bv badValue, ok, walked bool) {
	var elems []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return badValue{}, false, false
	}
	for i, e := range elems {
		if bv, ok := walkValue(e, t.Elem(), path+"["+strconv.Itoa(i)+"]"); ok {
			return bv, true, true
		}
	}
	return badValue{}, false, true
}

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns an object's members in the order they are given
// (a map would lose it, and the first bad member is the one to name);
// false if raw is not an object.
func objectMembers(raw []byte) ([]member, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key: key, value: v})
	}
	return out, true
}

// structFields maps the JSON names encoding/json decodes into struct t to
// their types, promoted fields of embedded structs included.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				continue // its fields are visible on their own
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		// The shallowest field of a name wins, as in encoding/json.
		if _, taken := out[name]; !taken || len(f.Index) == 1 {
			out[name] = f.Type
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
