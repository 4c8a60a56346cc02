package smtp

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// maxParts bounds the MIME parts walked in one mail, so a crafted mail
// cannot make the emulator recurse forever.
const maxParts = 64

// parseMail parses a mail's headers and finds its text/plain and text/html
// bodies, in any nesting of multipart parts.
func parseMail(r io.Reader) (Received, error) {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return Received{}, err
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		subject = msg.Header.Get("Subject")
	}
	m := Received{
		Subject:   subject,
		MessageID: strings.Trim(msg.Header.Get("Message-Id"), "<> "),
		Headers:   map[string][]string(msg.Header),
	}
	budget := maxParts
	if err := walkPart(&m, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, &budget); err != nil {
		return Received{}, err
	}
	return m, nil
}

// walkPart reads one MIME entity into m, descending into multiparts.
func walkPart(m *Received, contentType, encoding string, body io.Reader, budget *int) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("more than %d MIME parts", maxParts)
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if contentType == "" {
		mediaType, err = "text/plain", nil // RFC 2045 §5.2 default
	}
	if err != nil {
		return fmt.Errorf("bad Content-Type %q: %v", contentType, err)
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart() // decodes quoted-printable itself
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading a %s part: %v", mediaType, err)
			}
			if err := walkPart(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, budget); err != nil {
				return err
			}
		}
	}
	var text string
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		b, err := io.ReadAll(quotedprintable.NewReader(body))
		if err != nil {
			return fmt.Errorf("decoding quoted-printable: %v", err)
		}
		text = string(b)
	case "base64":
		b, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, body))
		if err != nil {
			return fmt.Errorf("decoding base64: %v", err)
		}
		text = string(b)
	default:
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		text = string(b)
	}
	// Mail travels with CRLF line ends (RFC 5322); recorded text uses LF,
	// as the notification's own body does.
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if *budget == maxParts-1 {
		// A single-part mail's body ends with the line break that comes
		// before DATA's final ".": transport, not content. (Inside a
		// multipart, that break belongs to the boundary and is already
		// gone.)
		text = strings.TrimSuffix(text, "\n")
	}
	switch mediaType {
	case "text/plain":
		if m.Text == "" {
			m.Text = text
		}
	case "text/html":
		if m.HTML == "" {
			m.HTML = text
		}
	}
	return nil
}
