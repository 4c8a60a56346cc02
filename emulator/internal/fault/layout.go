package fault

import (
	"fmt"
	"reflect"
	"strings"
)

// layout is where the engine finds what every emulator's faults F and
// rules O hold under the same names, so that no emulator spells out how
// to reach them:
//
//   - F's rules are its one exported field of type map[string]O; that
//     field's JSON name ("tokens", "numbers") names the set in errors.
//   - F's injected latency is its int field LatencyMillis.
//   - A rule's repeat count and Retry-After are O's fields Times (int),
//     RetryAfterSeconds (int) and RetryAfterHTTPDate (bool); a rule type
//     may lack the last two (SMTP has no Retry-After).
type layout[F, O any] struct {
	set      string
	rules    int // field indexes; -1 for a field O lacks
	latency  int
	times    int
	after    int
	httpDate int
}

// layoutOf finds F's and O's layout. It panics if they do not follow it:
// a programming error every emulator's tests would meet at once.
func layoutOf[F, O any]() layout[F, O] {
	ft, ot := reflect.TypeFor[F](), reflect.TypeFor[O]()
	var l layout[F, O]
	l.rules, l.set = -1, ""
	for i := range ft.NumField() {
		f := ft.Field(i)
		if f.IsExported() && f.Type == reflect.TypeFor[map[string]O]() {
			if l.rules >= 0 {
				panic(fmt.Sprintf("fault: %v has two fields of rules", ft))
			}
			l.rules = i
			l.set, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
	}
	if l.rules < 0 || l.set == "" {
		panic(fmt.Sprintf("fault: %v has no exported field of type map[string]%v with a JSON name", ft, ot))
	}
	l.latency = fieldIndex(ft, "LatencyMillis", reflect.Int, true)
	l.times = fieldIndex(ot, "Times", reflect.Int, true)
	l.after = fieldIndex(ot, "RetryAfterSeconds", reflect.Int, false)
	l.httpDate = fieldIndex(ot, "RetryAfterHTTPDate", reflect.Bool, false)
	return l
}

// fieldIndex is the index of t's field name of kind k, -1 if t lacks an
// optional one.
func fieldIndex(t reflect.Type, name string, k reflect.Kind, required bool) int {
	f, ok := t.FieldByName(name)
	switch {
	case ok && f.Type.Kind() == k && len(f.Index) == 1:
		return f.Index[0]
	case ok || required:
		panic(fmt.Sprintf("fault: %v needs a field %s of kind %v", t, name, k))
	}
	return -1
}

// rulesOf points at f's rules.
func (l layout[F, O]) rulesOf(f *F) *map[string]O {
	return reflect.ValueOf(f).Elem().Field(l.rules).Addr().Interface().(*map[string]O)
}

// latencyOf is f's injected latency in milliseconds.
func (l layout[F, O]) latencyOf(f *F) int {
	return int(reflect.ValueOf(f).Elem().Field(l.latency).Int())
}

// retryOf reads a rule's repeat count and Retry-After.
func (l layout[F, O]) retryOf(o O) Retry {
	v := reflect.ValueOf(&o).Elem()
	r := Retry{Times: int(v.Field(l.times).Int())}
	if l.after >= 0 {
		r.AfterSeconds = int(v.Field(l.after).Int())
	}
	if l.httpDate >= 0 {
		r.HTTPDate = v.Field(l.httpDate).Bool()
	}
	return r
}
