package smtp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	gosmtp "github.com/emersion/go-smtp"
)

// errAuthRequired is RFC 4954's reply to MAIL FROM before AUTH on a server
// that requires it (go-smtp's own ErrAuthRequired uses 502).
var errAuthRequired = &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

// session is one SMTP connection's state.
type session struct {
	e    *Emulator
	conn *gosmtp.Conn
	user string // authenticated user
	mech string // the AUTH mechanism the user authenticated with
	auth bool
	from string
	to   []string
}

var _ gosmtp.AuthSession = (*session)(nil)

func (e *Emulator) newSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{e: e, conn: c}, nil
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if s.e.cfg.Username != "" && !s.auth {
		s.e.faults.Reject(errAuthRequired.Code)
		return errAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if err := s.e.pickFault(to, false); err != nil {
		return err
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		// Too large (go-smtp answers 552) or the connection broke.
		var se *gosmtp.SMTPError
		if errors.As(err, &se) {
			s.e.faults.Reject(se.Code)
		}
		return err
	}
	s.e.faults.Wait(context.Background()) // a slow server; the client's own timeout bounds it
	for _, to := range s.to {
		if err := s.e.pickFault(to, true); err != nil {
			return err
		}
	}
	m, err := parseMail(bytes.NewReader(raw))
	if err != nil {
		s.e.faults.Reject(554)
		return &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 6, 0}, Message: "Message is not valid RFC 5322: " + err.Error()}
	}
	_, isTLS := s.conn.TLSConnectionState()
	m.From, m.To, m.Size, m.TLS, m.User, m.Mechanism = s.from, append([]string(nil), s.to...), len(raw), isTLS, s.user, s.mech
	m.Helo, m.ReceivedAt = s.conn.Hostname(), s.e.cfg.Now()
	s.e.faults.Accept()
	s.e.rec.Record(m)
	if l := s.e.cfg.Logger; l != nil {
		l.Info("smtp emulator: mail accepted", "from", m.From, "to", m.To, "subject", m.Subject,
			"message_id", m.MessageID, "size", m.Size, "html", m.HTML != "")
	}
	return nil
}

func (s *session) Reset() {
	s.from, s.to = "", nil
}

func (s *session) Logout() error { return nil }

// Messages returns the accepted mails, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the accepted mails with addr among the envelope
// recipients (case-insensitive), oldest first.
func (e *Emulator) MessagesTo(addr string) []Received {
	return e.rec.Where(func(m Received) bool {
		return slices.ContainsFunc(m.To, func(to string) bool { return strings.EqualFold(to, addr) })
	})
}
