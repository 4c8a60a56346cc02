package kafkaapi

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// checkUTF8 refuses a decoded Avro value holding text that is not valid
// UTF-8, naming the field (issue 31 item 6): the HTTP API refuses such a
// body, and the Kafka intake refuses such a record alike, rather than
// storing and sending bytes no reader can show. v is what the decoders
// fill: a *NotificationEvent or a record's fields by name.
func checkUTF8(v any) error {
	switch x := v.(type) {
	case *NotificationEvent:
		for _, f := range []struct{ name, s string }{
			{"notificationId", x.NotificationID}, {"userId", x.UserID}, {"productId", x.ProductID},
			{"notificationType", x.NotificationType}, {"title", x.Title}, {"body", x.Body}, {"priority", x.Priority},
		} {
			if !utf8.ValidString(f.s) {
				return notUTF8(f.name)
			}
		}
		for i, ch := range x.Channels {
			if !utf8.ValidString(ch) {
				return notUTF8(fmt.Sprintf("channels[%d]", i))
			}
		}
		return checkUTF8Value("data", x.Data)
	case *map[string]any:
		return checkUTF8Value("", *x)
	}
	return nil
}

// checkUTF8Value walks a decoded value: strings, maps (their keys too)
// and arrays, as Avro's generic decoding produces them.
func checkUTF8Value(path string, v any) error {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return notUTF8(path)
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			if !utf8.ValidString(k) {
				return badKey(path)
			}
			if !utf8.ValidString(x[k]) {
				return notUTF8(join(k))
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if !utf8.ValidString(k) {
				return badKey(path)
			}
			if err := checkUTF8Value(join(k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkUTF8Value(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case []string:
		for i, e := range x {
			if !utf8.ValidString(e) {
				return notUTF8(fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return nil
}

func notUTF8(field string) error { return fmt.Errorf("%s: is not valid UTF-8", field) }

func badKey(path string) error {
	if path == "" {
		return fmt.Errorf("a field name of the record is not valid UTF-8")
	}
	return fmt.Errorf("%s: a key is not valid UTF-8", path)
}

// sortedKeys orders a map's keys, so the field an error names does not
// change from one try to the next.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
