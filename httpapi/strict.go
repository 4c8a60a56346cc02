package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/heraldhq/herald/heraldtype"
)

// Strict JSON (issue 18, item 5). encoding/json accepts an object key
// given twice (the last one wins) and matches a key to a struct field
// case-insensitively, so {"user_id":"a","User_Id":"b"} is a trigger for b.
// A proxy, a WAF or a log reader that sees the first key sees another
// request than Herald does. checkStrict refuses both, at every nesting
// level, after encoding/json has accepted the body:
//
//   - a key given twice in one object (compared after unescaping, so
//     "a" and "\u0061" are the same key) is refused, in a struct or a map;
//   - a key of a struct-typed object must be the field's exact JSON name.
//
// It is one allocation-free pass over bytes the decoder has already
// validated, guided by the destination's type (so a data map may hold any
// key, and a type with its own UnmarshalJSON is only checked for duplicate
// keys). BenchmarkDecodeTrigger measures its cost on the trigger path.

// maxLinearKeys is how many keys of one object are compared pairwise
// before the check switches to a map: objects are small on the hot path,
// and a map keeps a hostile 1 MB object linear.
const maxLinearKeys = 32

// strictChecker walks one validated JSON value.
type strictChecker struct {
	b []byte
	i int
	// keys holds the raw keys of every object being walked, outermost
	// first; each object appends its own and truncates them when done.
	keys [][]byte
	// path holds the raw keys from the body's root to the current value,
	// to name the field in an error.
	path [][]byte
}

// checkStrict reports the first duplicate or case-variant key of body, a
// JSON value encoding/json has already decoded into a value of type t.
func checkStrict(body []byte, t reflect.Type) error {
	c := checkers.Get().(*strictChecker)
	c.b, c.i = body, 0
	err := c.value(infoFor(t))
	// Clear the slices' references into the body before pooling them.
	clear(c.keys[:cap(c.keys)])
	clear(c.path[:cap(c.path)])
	*c = strictChecker{keys: c.keys[:0], path: c.path[:0]}
	checkers.Put(c)
	return err
}

// checkers pools strictCheckers, so a decode allocates nothing for them.
var checkers = sync.Pool{New: func() any {
	return &strictChecker{keys: make([][]byte, 0, 16), path: make([][]byte, 0, 8)}
}}

// shape is what the checker needs to know of a Go type: the fields of a
// struct, the element of a map, slice or array. A nil *shape (a type that
// decodes itself, such as time.Time, an interface or a scalar) checks
// duplicate keys only.
type shape struct {
	fields map[string]*shape // a struct's JSON names; nil for other kinds
	elem   *shape            // a map's, slice's or array's element
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	// shapes caches infoFor: reflect.Type → *shape.
	shapes sync.Map
)

// infoFor returns t's shape, built once per type.
func infoFor(t reflect.Type) *shape {
	if t == nil {
		return nil
	}
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	return buildShape(t, map[reflect.Type]*shape{})
}

func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	orig := t
	for t.Kind() == reflect.Pointer {
		if decodesItself(t) {
			return nil
		}
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil
	}
	if s, ok := building[t]; ok { // a recursive type
		return s
	}
	s := &shape{}
	switch t.Kind() {
	case reflect.Struct:
		building[t] = s
		s.fields = map[string]*shape{}
		addFields(s.fields, t, 0, building)
	case reflect.Map, reflect.Slice, reflect.Array:
		building[t] = s
		s.elem = buildShape(t.Elem(), building)
	default:
		return nil
	}
	shapes.Store(orig, s)
	return s
}

// decodesItself reports a type encoding/json does not decode field by
// field (time.Time, a json.Unmarshaler, a non-string TextUnmarshaler).
func decodesItself(t reflect.Type) bool {
	return t.Kind() == reflect.Interface || t.Implements(jsonUnmarshalerType) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType) ||
		t.Kind() != reflect.String && reflect.PointerTo(t).Implements(textUnmarshalerType)
}

func (c *strictChecker) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\r', '\n':
			c.i++
		default:
			return
		}
	}
}

func (c *strictChecker) value(s *shape) error {
	c.space()
	if c.i >= len(c.b) {
		return nil
	}
	switch c.b[c.i] {
	case '{':
		return c.object(s)
	case '[':
		var es *shape
		if s != nil {
			es = s.elem
		}
		c.i++
		for {
			c.space()
			if c.b[c.i] == ']' {
				c.i++
				return nil
			}
			if err := c.value(es); err != nil {
				return err
			}
			c.space()
			if c.b[c.i] == ',' {
				c.i++
			}
		}
	case '"':
		c.str()
	default:
		for c.i < len(c.b) {
			switch c.b[c.i] {
			case ',', ']', '}', ' ', '\t', '\r', '\n':
				return nil
			}
			c.i++
		}
	}
	return nil
}

// str skips a string at c.i and returns its contents between the quotes
// and whether it holds an escape.
func (c *strictChecker) str() (raw []byte, escaped bool) {
	c.i++
	start := c.i
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case '\\':
			escaped = true
			c.i += 2
			continue
		case '"':
			raw = c.b[start:c.i]
			c.i++
			return raw, escaped
		}
		c.i++
	}
	return c.b[start:], escaped
}

func (c *strictChecker) object(s *shape) error {
	var fields map[string]*shape
	var es *shape
	if s != nil {
		fields, es = s.fields, s.elem
	}
	base := len(c.keys)
	var seen map[string]struct{}
	c.i++
	for {
		c.space()
		if c.b[c.i] == '}' {
			c.i++
			c.keys = c.keys[:base]
			return nil
		}
		raw, escaped := c.str()
		if escaped {
			var k string
			_ = json.Unmarshal(c.b[c.i-len(raw)-2:c.i], &k) // validated by the decoder
			raw = []byte(k)
		}
		c.path = append(c.path, raw)
		// Duplicates: pairwise while the object is small, a map beyond.
		if seen == nil && len(c.keys)-base < maxLinearKeys {
			for _, k := range c.keys[base:] {
				if bytes.Equal(k, raw) {
					return heraldtype.FieldErrorf(c.field(), "is given twice; give each field once")
				}
			}
			c.keys = append(c.keys, raw)
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*maxLinearKeys)
				for _, k := range c.keys[base:] {
					seen[string(k)] = struct{}{}
				}
			}
			if _, dup := seen[string(raw)]; dup {
				return heraldtype.FieldErrorf(c.field(), "is given twice; give each field once")
			}
			seen[string(raw)] = struct{}{}
		}
		vs := es
		if fields != nil {
			fs, ok := fields[string(raw)]
			if !ok {
				return caseVariant(c.field(), string(raw), fields)
			}
			vs = fs
		}
		c.space()
		c.i++ // ':'
		if err := c.value(vs); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		c.space()
		if c.b[c.i] == ',' {
			c.i++
		}
	}
}

// field names the current value by its keys from the root, joined by dots.
func (c *strictChecker) field() string {
	parts := make([]string, len(c.path))
	for i, p := range c.path {
		parts[i] = string(p)
	}
	return strings.Join(parts, ".")
}

// caseVariant is the error for a key encoding/json matched to a field
// only by ignoring case.
func caseVariant(path, key string, fields map[string]*shape) error {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return heraldtype.FieldErrorf(path, "is not a known field; field names are case-sensitive: use %q", name)
		}
	}
	return heraldtype.FieldErrorf(path, "is not a known field")
}

// addFields adds the JSON names encoding/json decodes into struct t,
// promoted fields of embedded structs included (an outer field wins).
func addFields(m map[string]*shape, t reflect.Type, depth int, building map[reflect.Type]*shape) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && depth < 8 {
				addFields(m, ft, depth+1, building)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := m[name]; !taken || depth == 0 {
			m[name] = buildShape(f.Type, building)
		}
	}
}
