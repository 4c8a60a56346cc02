package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/jsonkind"
)

// bodySpec describes what one endpoint accepts as its request body.
type bodySpec struct {
	// optional lets an empty body stand for {} (PUT /v1/users/{id} with
	// every field defaulted).
	optional bool
	// timeField names the body's time field, if it has one, so that a
	// malformed time is reported against it: encoding/json does not say
	// which field a time.Time failed to parse in.
	timeField string
}

// decodeJSON reads one JSON object from r's body into dst (a pointer to a
// struct). Everything wrong with the body is the caller's fault and comes
// back as a 4xx *heraldtype.Error: a body over the size limit (413), a
// non-JSON Content-Type (415), invalid UTF-8, invalid JSON, a value of the
// wrong type, an unknown field, a key given twice or in another case than
// the field's (strict.go), or anything after the object (400).
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, dst any, spec bodySpec) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return heraldtype.Errorf(ERequestTooLarge, "the request body exceeds the limit of %d bytes", tooLarge.Limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return heraldtype.Errorf(ERequestTimeout, "the request body did not arrive within the read timeout of %s", s.readTimeout)
		}
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body could not be read completely")
	}
	// The media type matters only when there is a body to interpret.
	if len(body) > 0 {
		if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
			return err
		}
	}
	return decodeBody(body, dst, spec)
}

// decodeBody is decodeJSON after the body has been read.
func decodeBody(body []byte, dst any, spec bodySpec) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		if spec.optional {
			return nil
		}
		return heraldtype.Errorf(heraldtype.EINVALID, "a JSON object is required as the request body")
	}
	// encoding/json silently replaces invalid UTF-8 with U+FFFD; Herald
	// would then store and send text the caller never wrote.
	if !utf8.Valid(body) {
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body is not valid UTF-8")
	}
	if trimmed[0] != '{' {
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, spec.timeField, body, reflect.TypeOf(dst))
	}
	// Exactly one value: `{…}{…}` or `{…} x` is a client bug that would
	// otherwise be silently half-processed.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body must hold exactly one JSON object; there is data after it")
	}
	// A duplicate or case-variant key, which encoding/json accepts
	// (strict.go).
	return checkStrict(body, reflect.TypeOf(dst))
}

// checkContentType accepts a missing Content-Type, JSON, and the two types
// that clients send for JSON without being told otherwise: `curl -d`
// (application/x-www-form-urlencoded, used by the quick start) and fetch()
// with a string body (text/plain). The body is parsed as JSON in every
// case. Herald's API uses no cookies, so accepting these "simple" types
// opens no cross-site request forgery.
func checkContentType(h string) error {
	if h == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(h)
	if err != nil {
		return heraldtype.Errorf(EUnsupportedMediaType, "Content-Type %q cannot be parsed; send application/json", h)
	}
	switch {
	case mt == "application/json",
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"),
		mt == "application/x-www-form-urlencoded",
		mt == "text/plain":
	default:
		return heraldtype.Errorf(EUnsupportedMediaType, "Content-Type %s is not supported; send application/json", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return heraldtype.Errorf(EUnsupportedMediaType, "charset %q is not supported; send UTF-8", cs)
	}
	return nil
}

// jsonError translates an encoding/json error into a 400 that names the
// field by its whole path (decodepath.go) when the body is valid JSON, and
// as far as the decoder knows it otherwise.
func jsonError(err error, timeField string, body []byte, dst reflect.Type) error {
	var (
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		timeFail *time.ParseError
	)
	switch {
	case errors.As(err, &syntax):
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return heraldtype.Errorf(heraldtype.EINVALID, "the request body is not valid JSON: it ends in the middle of a value")
	}
	if dst != nil && json.Valid(body) {
		if bv, ok := findBadValue(body, dst); ok && bv.path != "" {
			return bv.fieldError()
		}
	}
	switch {
	case errors.As(err, &typ):
		if typ.Field == "" {
			return heraldtype.Errorf(heraldtype.EINVALID, "the request body must be a JSON object")
		}
		return heraldtype.FieldErrorf(typ.Field, "must be %s, not %s", jsonkind.Of(typ.Type), typ.Value)
	case errors.As(err, &timeFail) || strings.Contains(err.Error(), "Time.UnmarshalJSON"):
		msg := "must be an RFC 3339 time such as 2026-05-01T09:00:00+09:00"
		if timeField == "" {
			return heraldtype.Errorf(heraldtype.EINVALID, "a time %s", msg)
		}
		return heraldtype.FieldErrorf(timeField, "%s", msg)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return heraldtype.FieldErrorf(name, "is not a known field")
	}
	// Whatever else the decoder reports is still about the bytes the
	// caller sent: the body is the only input.
	return heraldtype.Errorf(heraldtype.EINVALID, "the request body is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// fieldError is the 400 naming a bad value by its whole path.
func (bv badValue) fieldError() error {
	var (
		typ      *json.UnmarshalTypeError
		timeFail *time.ParseError
	)
	switch {
	case bv.unknown:
		return heraldtype.FieldErrorf(bv.path, "is not a known field")
	case errors.As(bv.err, &timeFail) || bv.typ == reflect.TypeFor[time.Time]():
		return heraldtype.FieldErrorf(bv.path, "must be an RFC 3339 time such as 2026-05-01T09:00:00+09:00")
	case errors.As(bv.err, &typ):
		return heraldtype.FieldErrorf(bv.path, "must be %s, not %s", jsonkind.Of(bv.typ), typ.Value)
	}
	return heraldtype.FieldErrorf(bv.path, "%s", strings.TrimPrefix(bv.err.Error(), "json: "))
}
