package callout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// An answer is read as a stream of JSON tokens into bounded values (issue
// 31 item 3): a 16 MiB answer decoded whole into map[string]any took 341
// MiB of heap, and a batch held several. Every value read — kept or
// skipped, nested or not — is taken from a Budget, so what one answer can
// cost is set by the operator's bounds, not by the endpoint.

// answerError is a decoder's own refusal: its text names only the place
// in the answer and the bound, never the answer's bytes, so it is shown
// as is.
type answerError struct{ msg string }

func (e *answerError) Error() string { return e.msg }

// Badf is a decoder's refusal of an answer (a wrong shape, a bound
// broken). Its text must not quote the answer.
func Badf(format string, args ...any) error {
	return &answerError{msg: fmt.Sprintf(format, args...)}
}

// DescribeDecodeError says what is wrong with an answer without quoting
// it: a JSON syntax error names only the byte offset (its own text would
// show a character of the answer).
func DescribeDecodeError(err error) string {
	var ae *answerError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ae):
		return ae.msg
	case errors.As(err, &se):
		return fmt.Sprintf("is not valid JSON (at byte %d)", se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "is empty or cut short"
	}
	return "does not decode"
}

// Budget is how many JSON values an answer may still hold; Bound names
// the configuration key that set it, for the refusal.
type Budget struct {
	Left  int
	Bound string
	max   int
}

// NewBudget returns a budget of n values.
func NewBudget(n int, bound string) *Budget { return &Budget{Left: n, Bound: bound, max: n} }

func (b *Budget) take() error {
	if b.Left <= 0 {
		return Badf("holds more than %d values (%s)", b.max, b.Bound)
	}
	b.Left--
	return nil
}

// Token reads the next token, counting it.
func (b *Budget) Token(dec *json.Decoder) (json.Token, error) {
	if err := b.take(); err != nil {
		return nil, err
	}
	return dec.Token()
}

// Open reads the start of the container d ('{' or '['): true if it is
// one, false if the value is null; any other value is an error naming
// what ("" for the answer itself).
func (b *Budget) Open(dec *json.Decoder, d json.Delim, what string) (bool, error) {
	tok, err := b.Token(dec)
	if err != nil {
		return false, err
	}
	switch tok {
	case d:
		return true, nil
	case nil:
		return false, nil
	}
	kind := "an object"
	if d == '[' {
		kind = "a list"
	}
	if what == "" {
		return false, Badf("is not %s", kind)
	}
	return false, Badf("has %s that is not %s", what, kind)
}

// Key reads an object's next key (More was true).
func (b *Budget) Key(dec *json.Decoder) (string, error) {
	tok, err := dec.Token() // a key is not a value: counted with its value
	if err != nil {
		return "", err
	}
	k, _ := tok.(string)
	return k, nil
}

// Close reads the end of the container More said is done.
func (b *Budget) Close(dec *json.Decoder) error {
	_, err := dec.Token()
	return err
}

// Value reads one whole value into what json.Unmarshal makes of an any:
// map[string]any, []any, string, float64, bool or nil.
func (b *Budget) Value(dec *json.Decoder) (any, error) {
	tok, err := b.Token(dec)
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		for dec.More() {
			k, err := b.Key(dec)
			if err != nil {
				return nil, err
			}
			if m[k], err = b.Value(dec); err != nil {
				return nil, err
			}
		}
		return m, b.Close(dec)
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := b.Value(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, b.Close(dec)
	}
	return tok, nil
}

// Skip reads one whole value and drops it; it still counts.
func (b *Budget) Skip(dec *json.Decoder) error {
	tok, err := b.Token(dec)
	if err != nil {
		return err
	}
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	for dec.More() {
		if tok == json.Delim('{') {
			if _, err := b.Key(dec); err != nil {
				return err
			}
		}
		if err := b.Skip(dec); err != nil {
			return err
		}
	}
	return b.Close(dec)
}

// End checks nothing but white space follows the answer's value.
func End(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return Badf("has data after its JSON value")
		}
		return err
	}
	return nil
}
