package console

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// TestPageStatusIsTheAPIs: a console page answers an error with the status
// the API gives its code — a body over its limit is a 400, as on the API,
// not a 500 — and a refused CSRF token with 403.
func TestPageStatusIsTheAPIs(t *testing.T) {
	for code, want := range map[string]int{
		heraldtype.EINVALID: http.StatusBadRequest, heraldtype.ETOOLARGE: http.StatusBadRequest,
		heraldtype.ENOTFOUND: http.StatusNotFound, heraldtype.ECONFLICT: http.StatusConflict,
		heraldtype.EPERMISSIONDENIED: http.StatusForbidden, ECSRFInvalid: http.StatusForbidden,
		heraldtype.ERATELIMITED: http.StatusTooManyRequests, heraldtype.EUNAVAILABLE: http.StatusServiceUnavailable,
		"no_such_code": http.StatusInternalServerError,
	} {
		if got := statusOf(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}
