// Package twilio is an in-process Twilio Messages API: Basic authentication,
// Twilio's validation and error bodies, recording, fault injection, STOP
// simulation and signed status callbacks (`herald emulate twilio`, serve
// --dev, and tests).
//
// It imitates the service the client in provider/twilio talks to and ships
// apart from it: it imports no provider package and keeps its own copy of
// the protocol's codes and error bodies. Import it beside the client as
// twilioemu.
package twilio
