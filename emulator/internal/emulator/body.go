package emulator

import (
	"errors"
	"io"
	"net/http"
)

// ReadBody reads r's body, at most max bytes (a bound that only keeps a
// broken client from exhausting memory). ok is false if it could not:
// tooLarge then says the body was over max, which the emulator answers
// with its provider's error; otherwise the client hung up and there is
// no one to answer.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) (body []byte, tooLarge, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tl *http.MaxBytesError
		return nil, errors.As(err, &tl), false
	}
	return body, false, true
}
