package httpapi

import (
	"html/template"
	"net/http"
)

// The e-mail tracking routes (issue 35 item 2) are open (publicLinkAccess:
// no credential, limited per client address): the signed token in the
// path is what they act on (herald.Client.EmailOpened, EmailClicked), as
// a mail reader has no API key. A failure to record is the Client's to
// log; these routes answer the pixel or the redirect whenever the token
// is good.

// openPixel is a transparent 1×1 GIF (43 bytes).
var openPixel = []byte{
	'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
	'!', 0xf9, 4, 1, 0, 0, 0, 0, ',', 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 'D', 1, 0, ';',
}

// trackOpen: GET /t/o/{token} records the e-mail's opened receipt and
// answers the pixel. A bad token is the JSON error of any route (no mail
// client shows it).
func (s *Server) trackOpen(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.EmailOpened(r.Context(), r.PathValue("token")); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "image/gif")
	// Fetched again on every open a client does not cache for itself.
	h.Set("Cache-Control", "no-store, private")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openPixel)
	return nil
}

// trackClick: GET /t/c/{token} records the e-mail's clicked receipt and
// redirects (302) to the link the verified token carries — never to
// anything the request names, so it is no open redirect. A bad, tampered
// or expired token is a page saying so, with its status (400, 404), and
// no redirect.
func (s *Server) trackClick(w http.ResponseWriter, r *http.Request) error {
	link, err := s.client.EmailClicked(r.Context(), r.PathValue("token"))
	if err != nil {
		s.writeLinkPage(w, r, err)
		return nil
	}
	h := w.Header()
	h.Set("Location", link)
	h.Set("Cache-Control", "no-store, private")
	// The tracked URL carries the token: never send it on to the site.
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusFound)
	return nil
}

// linkPage is the page of a tracked link that leads nowhere.
var linkPage = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Link not available</title></head><body>
<h1>This link cannot be followed</h1>
<p>{{.}}.</p>
<p>Open the page from the sender's site instead, or ask the sender for a new link.</p>
</body></html>
`))

// writeLinkPage writes err as linkPage with err's status (the one
// code→status map), logging as writeError does.
func (s *Server) writeLinkPage(w http.ResponseWriter, r *http.Request, err error) {
	body, _, logIt := errorBody(r.Context(), err)
	if logIt {
		// Not a token's refusal: the JSON writer logs it and answers it.
		s.writeError(w, r, err)
		return
	}
	status := StatusForCode(body.Code)
	traceError(r, body.Code, status)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = linkPage.Execute(w, pageMessage(body))
}

// pageMessage is what linkPage says of a refusal.
func pageMessage(b ErrorBody) string {
	if b.Field == "token" {
		return "This link is not complete: it may have been cut or changed on its way"
	}
	return "Sorry: " + b.Message
}
