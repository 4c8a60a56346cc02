package console

import (
	"crypto/subtle"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// ECSRFInvalid is the error code of a state change without the session's
// CSRF token (the page shows it as data-code on #error).
const ECSRFInvalid = "csrf_invalid"

// errCSRF is the answer to a state change whose CSRF token is missing or
// is not the session's.
var errCSRF = heraldtype.Errorf(ECSRFInvalid, "this form has expired or did not come from this console; reload the page and try again")

// csrfField is the hidden form field that carries the token; csrfHeader
// is the header the live script would send it in.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// maxFormBytes bounds a console form: the largest is a filter.
const maxFormBytes = 64 << 10

// csrfValid reports whether r carries s's CSRF token, in the form or in
// the header. The session cookie is SameSite=Strict as well; the token is
// the defence that does not depend on the browser.
func (c *Console) csrfValid(r *http.Request, s Session) bool {
	r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return false
	}
	got := r.PostForm.Get(csrfField)
	if got == "" {
		got = r.Header.Get(csrfHeader)
	}
	return s.CSRF != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}
