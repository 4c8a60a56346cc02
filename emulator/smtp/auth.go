package smtp

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// The AUTH mechanisms the emulator speaks (Config.Mechanisms).
const (
	MechPlain   = "PLAIN"
	MechLogin   = "LOGIN"
	MechCramMD5 = "CRAM-MD5"
	MechXOAuth2 = "XOAUTH2"
)

// DefaultMechanisms are advertised when Config.Mechanisms is empty: every
// mechanism the emulator speaks, in the order Gmail-like servers list them.
var DefaultMechanisms = []string{MechPlain, MechLogin, MechCramMD5, MechXOAuth2}

// xoauth2Failure is the challenge Gmail sends for a refused XOAUTH2 token
// (base64-encoded on the wire) before its 535: the client answers it with
// an empty line.
const xoauth2Failure = `{"status":"401","schemes":"Bearer","scope":"https://mail.google.com/"}`

// mechanisms validates and upper-cases the configured mechanisms.
func mechanisms(in []string) ([]string, error) {
	if len(in) == 0 {
		return slices.Clone(DefaultMechanisms), nil
	}
	out := make([]string, 0, len(in))
	for _, m := range in {
		m = strings.ToUpper(strings.TrimSpace(m))
		if !slices.Contains(DefaultMechanisms, m) {
			return nil, fmt.Errorf("smtp emulator: Mechanisms: %q is not one of %s", m, strings.Join(DefaultMechanisms, ", "))
		}
		if slices.Contains(out, m) {
			return nil, fmt.Errorf("smtp emulator: Mechanisms: %q is listed twice", m)
		}
		out = append(out, m)
	}
	return out, nil
}

// AuthMechanisms advertises the configured mechanisms in EHLO.
func (s *session) AuthMechanisms() []string { return s.e.cfg.Mechanisms }

// Auth starts the server side of one of the advertised mechanisms, each
// checking its own kind of credential: a password for PLAIN and LOGIN,
// the password's HMAC of a challenge for CRAM-MD5, a bearer token for
// XOAUTH2. Without configured credentials any pass.
func (s *session) Auth(mech string) (sasl.Server, error) {
	if !slices.Contains(s.e.cfg.Mechanisms, mech) {
		return nil, gosmtp.ErrAuthUnknownMechanism
	}
	switch mech {
	case MechPlain:
		return sasl.NewPlainServer(func(_, username, password string) error {
			return s.login(mech, username, s.e.checkPassword(username, password))
		}), nil
	case MechLogin:
		return &loginServer{done: func(username, password string) error {
			return s.login(mech, username, s.e.checkPassword(username, password))
		}}, nil
	case MechCramMD5:
		return s.newCramMD5Server(), nil
	default:
		return &xoauth2Server{done: func(username, token string) error {
			return s.login(mech, username, s.e.checkToken(username, token))
		}}, nil
	}
}

// login records a successful authentication, or counts a failed one and
// answers 535.
func (s *session) login(mech, username string, ok bool) error {
	if !ok {
		s.e.faults.Reject(gosmtp.ErrAuthFailed.Code)
		return gosmtp.ErrAuthFailed
	}
	s.user, s.mech, s.auth = username, mech, true
	return nil
}

// checkPassword reports whether username and password are the configured
// ones (any are, if none are configured).
func (e *Emulator) checkPassword(username, password string) bool {
	if e.cfg.Username == "" {
		return true
	}
	return equal(username, e.cfg.Username) && equal(password, e.cfg.Password)
}

// checkToken reports whether an XOAUTH2 bearer token is accepted for
// username: by VerifyToken if set, else equal to OAuth2Token. With a
// Username but neither, no token is.
func (e *Emulator) checkToken(username, token string) bool {
	cfg := &e.cfg
	if cfg.VerifyToken != nil {
		return cfg.VerifyToken(username, token)
	}
	if cfg.Username == "" {
		return true
	}
	return cfg.OAuth2Token != "" && equal(username, cfg.Username) && equal(token, cfg.OAuth2Token)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// loginServer is the server side of LOGIN (draft-murchison-sasl-login):
// "Username:" and "Password:" challenges, the username possibly sent as
// the initial response.
type loginServer struct {
	step     int
	username string
	done     func(username, password string) error
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		if response == nil {
			l.step = 1
			return []byte("Username:"), false, nil
		}
		l.username, l.step = string(response), 2
		return []byte("Password:"), false, nil
	case 1:
		l.username, l.step = string(response), 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		return nil, true, l.done(l.username, string(response))
	}
	return nil, false, sasl.ErrUnexpectedClientResponse
}

// cramMD5Server is the server side of CRAM-MD5 (RFC 2195): a unique
// challenge, answered with "username hex(HMAC-MD5(password, challenge))".
type cramMD5Server struct {
	s         *session
	challenge []byte
}

func (s *session) newCramMD5Server() *cramMD5Server {
	return &cramMD5Server{s: s, challenge: fmt.Appendf(nil, "<%s.%d@%s>", rand.Text(), s.e.cfg.Now().UnixNano(), s.e.cfg.Domain)}
}

func (c *cramMD5Server) Next(response []byte) ([]byte, bool, error) {
	if response == nil {
		return c.challenge, false, nil
	}
	username, digest, ok := bytes.Cut(response, []byte(" "))
	if !ok {
		return nil, false, sasl.ErrUnexpectedClientResponse
	}
	e := c.s.e
	pass := e.cfg.Password
	if e.cfg.Username == "" {
		// Any credentials pass: nothing to check the digest against.
		return nil, true, c.s.login(MechCramMD5, string(username), true)
	}
	mac := hmac.New(md5.New, []byte(pass))
	mac.Write(c.challenge)
	want := hex.EncodeToString(mac.Sum(nil))
	ok = equal(string(username), e.cfg.Username) && equal(strings.ToLower(string(digest)), want)
	return nil, true, c.s.login(MechCramMD5, string(username), ok)
}

// xoauth2Server is the server side of XOAUTH2 (Google's and Microsoft's
// SASL bearer mechanism): "user=<u>^Aauth=Bearer <token>^A^A"; a refused
// token gets Gmail's JSON challenge, then 535.
type xoauth2Server struct {
	failed bool
	done   func(username, token string) error
}

func (x *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if x.failed {
		return nil, true, gosmtp.ErrAuthFailed
	}
	if response == nil {
		return []byte{}, false, nil
	}
	var username, token string
	for _, f := range strings.Split(string(response), "\x01") {
		switch {
		case strings.HasPrefix(f, "user="):
			username = f[len("user="):]
		case strings.HasPrefix(f, "auth=Bearer "):
			token = f[len("auth=Bearer "):]
		}
	}
	if username == "" || token == "" {
		return nil, false, &gosmtp.SMTPError{Code: 501, EnhancedCode: gosmtp.EnhancedCode{5, 5, 2}, Message: "Malformed XOAUTH2 response"}
	}
	if err := x.done(username, token); err != nil {
		x.failed = true
		return []byte(xoauth2Failure), false, nil
	}
	return nil, true, nil
}
