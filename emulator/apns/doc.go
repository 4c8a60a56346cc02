// Package apns is an in-process Apple Push Notification service over TLS and
// HTTP/2: provider-token checks, Apple's validation and error answers,
// recording and fault injection (`herald emulate apns`, serve --dev, and
// tests).
//
// It imitates the service the client in provider/apns talks to and ships
// apart from it: it imports no provider package and keeps its own copy of
// the protocol's codes and error bodies. Import it beside the client as
// apnsemu.
package apns
