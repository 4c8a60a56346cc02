package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/textproto"
	"regexp"
	"strconv"
	"strings"

	mail "github.com/wneessen/go-mail"

	"github.com/heraldhq/herald/heraldtype"
)

// Herald's codes for failures that carry no SMTP reply code.
const (
	// CodeBadAddress: the recipient address is not a valid address.
	CodeBadAddress = "invalid_address"
	// codeNetwork: no SMTP answer (refused connection, timeout, reset).
	codeNetwork = "network"
	// codeTLS: the TLS handshake or the server's certificate failed.
	codeTLS = "tls"
	// codeConfig: the server lacks what the configuration requires
	// (STARTTLS, AUTH, the configured mechanism), or offers only
	// mechanisms the configuration may not use.
	codeConfig = "smtp_config"
	// codeOAuth2: the XOAUTH2 token could not be had from the token
	// endpoint.
	codeOAuth2 = "smtp_oauth2"
	// codeInvalidMessage: Herald refused to build the mail.
	codeInvalidMessage = "invalid_message"
)

// Code returns the heraldtype.SendError code for an SMTP reply code:
// "smtp_550".
func Code(reply int) string { return "smtp_" + strconv.Itoa(reply) }

// classify turns an error of go-mail into a *heraldtype.SendError:
//
//   - an SMTP reply decides by its first digit: 4xx (421 service closing,
//     450/451/452 mailbox busy, local error, out of storage) is temporary,
//     5xx is permanent — including 535 authentication failed, a
//     configuration error that retrying cannot fix;
//   - a 5xx with the enhanced status 5.1.1 (bad destination mailbox) or
//     5.1.10 (the domain has a null MX, RFC 7505) sets Suppress: the
//     mailbox does not exist, and mailing it again only hurts the sender's
//     reputation. Only these, and only with the enhanced code: a bare 550
//     is as often a policy or spam refusal (5.7.1) as an unknown user, and
//     suppressing on it could silence a whole domain over one bad day;
//   - no reply at all (refused connection, timeout, reset, TLS failure) is
//     temporary.
//
// The Code is smtp_<reply> (smtp_550); the message keeps the server's text
// with its enhanced status code.
func classify(err error) *heraldtype.SendError {
	se := &heraldtype.SendError{Message: err.Error(), Err: err}
	var sendErr *mail.SendError
	if errors.As(err, &sendErr) {
		return classifySendError(se, sendErr)
	}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		// An error before MAIL FROM: the greeting, EHLO, STARTTLS or AUTH.
		classifyReply(se, reply.Code, enhancedCode(reply.Msg))
		return se
	}
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.Is(err, mail.ErrPlainAuthNotSupported),
		strings.Contains(err.Error(), "does not support STARTTLS"),
		strings.Contains(err.Error(), "does not support SMTP AUTH"):
		// go-mail reports these as plain errors. The server lacks what
		// the configuration demands; only an operator can fix it.
		se.Class, se.Code = heraldtype.ClassPermanent, codeConfig
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &recErr), errors.As(err, &alert):
		// A certificate can be renewed and a TLS front end can recover:
		// temporary, with its own code so operators see it is TLS.
		se.Class, se.Code = heraldtype.ClassTemporary, codeTLS
	default:
		// A refused or reset connection, a timeout (context deadline).
		se.Class, se.Code = heraldtype.ClassTemporary, codeNetwork
	}
	return se
}

// classifySendError classifies go-mail's error for MAIL FROM, RCPT TO,
// DATA or the message content.
func classifySendError(se *heraldtype.SendError, e *mail.SendError) *heraldtype.SendError {
	if code := e.ErrorCode(); code >= 400 {
		enh := e.EnhancedStatusCode()
		if enh == "" {
			enh = enhancedCode(e.Error())
		}
		classifyReply(se, code, enh)
		return se
	}
	switch e.Reason {
	case mail.ErrGetSender, mail.ErrGetRcpts, mail.ErrNoUnencoded:
		// The mail itself cannot be sent as built.
		se.Class, se.Code = heraldtype.ClassPermanent, codeInvalidMessage
	default:
		// No reply code: the connection broke mid-dialogue.
		se.Class, se.Code = heraldtype.ClassTemporary, codeNetwork
	}
	return se
}

// classifyReply sets se's class, code and Suppress for an SMTP reply.
func classifyReply(se *heraldtype.SendError, code int, enhanced string) {
	se.Code = Code(code)
	if code >= 500 {
		se.Class = heraldtype.ClassPermanent
		se.Suppress = noSuchMailbox(code, enhanced, se.Message)
	} else {
		se.Class = heraldtype.ClassTemporary
	}
	if enhanced != "" && !strings.Contains(se.Message, enhanced) {
		se.Message = enhanced + " " + se.Message
	}
}

// noSuchMailbox reports whether a permanent reply says the mailbox does
// not exist (issue 21 item 2), so the address is suppressed:
//
//   - the enhanced status 5.1.1 (bad destination mailbox) or 5.1.10 (null
//     MX, RFC 7505), whether the server advertised ENHANCEDSTATUSCODES or
//     only wrote the code in its text ("550-5.1.1 The email account that
//     you tried to reach does not exist");
//   - or, with no enhanced code at all, a 550, 551 or 553 whose text says
//     so in the words the major servers use ("User unknown", "No such
//     user", "does not exist", "Recipient not found", …) — unless it also
//     speaks of policy, spam, blocking or rate, which a bounce for a real
//     mailbox does.
//
// A bare 550 is as often a policy or spam refusal as an unknown user, so
// nothing else suppresses: suppressing on it could silence a whole domain
// over one bad day.
func noSuchMailbox(code int, enhanced, text string) bool {
	if enhanced == "" {
		enhanced = enhancedCode(text)
	}
	switch enhanced {
	case "5.1.1", "5.1.10":
		return true
	case "":
	default:
		// An enhanced code that says something else (5.7.1 policy, 5.2.2
		// mailbox full) is believed over the wording.
		return false
	}
	if code != 550 && code != 551 && code != 553 {
		return false
	}
	t := strings.ToLower(text)
	for _, w := range notAMailboxExceptions {
		if strings.Contains(t, w) {
			return false
		}
	}
	for _, w := range noSuchMailboxWords {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// noSuchMailboxWords are how servers without enhanced codes say that a
// mailbox does not exist (lower case).
var noSuchMailboxWords = []string{
	"user unknown", "unknown user", "no such user", "no such recipient", "no such mailbox",
	"does not exist", "doesn't exist", "doesn't have a", "recipient not found", "user not found",
	"address not found", "mailbox not found", "unknown recipient", "invalid recipient", "recipient unknown",
	"not a valid mailbox", "no mailbox here", "mailbox does not exist", "account does not exist",
}

// notAMailboxExceptions are words of a refusal that is about the sender
// or the message, not the mailbox (lower case).
var notAMailboxExceptions = []string{"spam", "policy", "blocked", "blacklist", "blocklist", "reputation", "rate limit", "relay"}

// enhancedCodePattern finds an RFC 3463 enhanced status code in a reply
// text, wherever the server or the library put it: "550 5.1.1 …",
// "550-5.1.1 …", "(5.1.1)", "\"5.1.1", "#5.1.1".
var enhancedCodePattern = regexp.MustCompile(`(?:^|[^0-9.])([245]\.[0-9]{1,3}\.[0-9]{1,3})(?:[^0-9.]|$)`)

// enhancedCode finds an RFC 3463 enhanced status code ("5.1.1") in an SMTP
// reply text, or returns "".
func enhancedCode(text string) string {
	if m := enhancedCodePattern.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// replyCodes are the failure replies of RFC 5321 (section 4.2.3) and its
// extensions (RFC 3207 454, RFC 4954 530/534/535/538, RFC 6531 553).
var replyCodes = []int{421, 432, 450, 451, 452, 454, 455, 500, 501, 502, 503, 504, 521, 530, 534, 535, 538, 550, 551,
	552, 553, 554, 555, 556}

// Codes lists every code a send can fail with: the SMTP replies servers
// send and Herald's own. Herald's metrics label any other code "other".
func (c *Client) Codes() []string {
	out := []string{CodeBadAddress, codeNetwork, codeTLS, codeConfig, codeOAuth2, codeInvalidMessage}
	for _, r := range replyCodes {
		out = append(out, Code(r))
	}
	return out
}
