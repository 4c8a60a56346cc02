package httpapi

import (
	"html/template"
	"net/http"

	"github.com/heraldhq/herald"
)

// The unsubscribe routes are open (openAccess): the signed token in the
// path is the credential (herald.Client.Unsubscribe), as a mail
// recipient has no API key. A bad token is invalid_argument (400) or
// not_found (404), never a 500.

// unsubscribePage is the minimal page both routes answer. The form posts
// the RFC 8058 body to the same URL, so a person's click and a mailbox
// provider's one-click POST take one path.
var unsubscribePage = template.Must(template.New("unsubscribe").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Unsubscribe</title></head><body>
{{if .Done}}<p>You will no longer receive “{{.Type}}” e-mails.</p>
{{else}}<p>Stop receiving “{{.Type}}” e-mails?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button></form>
{{end}}</body></html>
`))

type unsubscribeView struct {
	Type string
	Done bool
}

// getUnsubscribe: GET /v1/unsubscribe/{token} shows what the link would
// turn off and a button that POSTs; it never changes anything (mail
// scanners and link previews fetch every URL of a mail).
func (s *Server) getUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	u, err := s.client.CheckUnsubscribe(r.Context(), r.PathValue("token"))
	if err != nil {
		return err
	}
	writeUnsubscribePage(w, u)
	return nil
}

// postUnsubscribe: POST /v1/unsubscribe/{token} turns the preference off
// (RFC 8058 one-click; the body, "List-Unsubscribe=One-Click", is not
// needed to act and is not read). Idempotent.
func (s *Server) postUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	u, err := s.client.Unsubscribe(r.Context(), r.PathValue("token"))
	if err != nil {
		return err
	}
	writeUnsubscribePage(w, u)
	return nil
}

func writeUnsubscribePage(w http.ResponseWriter, u herald.Unsubscription) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// The token is in the URL: never leak it to another site, and never
	// let one frame the button.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(http.StatusOK)
	_ = unsubscribePage.Execute(w, unsubscribeView{Type: u.Type, Done: u.Unsubscribed})
}
