// Package smtp is an in-process SMTP submission server (go-smtp) that records
// what it accepts and answers scripted SMTP errors, with an HTTP side
// listener for the control routes (`herald emulate smtp`, serve --dev, and
// tests).
//
// It imitates the service the client in provider/smtp talks to and ships
// apart from it: it imports no provider package and keeps its own copy of
// the protocol's codes and error bodies. Import it beside the client as
// smtpemu.
package smtp
