package httpapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// parseQuery applies a setter per known parameter, in name order so the
// same query always gets the same error; an unknown or repeated
// parameter is an error naming it, so a typo (?sate=dead) is never
// silently ignored.
func parseQuery(raw string, setters map[string]func(string) error) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "the query string is malformed: %s", err.Error())
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		set, ok := setters[name]
		if !ok {
			known := make([]string, 0, len(setters))
			for k := range setters {
				known = append(known, k)
			}
			slices.Sort(known)
			return heraldtype.FieldErrorf(name, "is not a parameter of this endpoint (%s)", strings.Join(known, ", "))
		}
		if vs := q[name]; len(vs) > 1 {
			return heraldtype.FieldErrorf(name, "is given %d times; give it once", len(vs))
		}
		if err := set(q[name][0]); err != nil {
			return err
		}
	}
	return nil
}

// setString is a parseQuery setter that stores the value.
func setString(dst *string) func(string) error {
	return func(v string) error { *dst = v; return nil }
}

// setTime is the parseQuery setter of an RFC 3339 time named field.
func setTime(field string, dst *time.Time) func(string) error {
	return func(v string) (err error) {
		*dst, err = parseTime(field, v)
		return err
	}
}

// setLimit is the parseQuery setter of a page size.
func setLimit(dst *int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return heraldtype.FieldErrorf("limit", "must be a positive integer")
		}
		*dst = n
		return nil
	}
}
