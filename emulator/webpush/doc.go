// Package webpush is an in-process RFC 8030 push service that also plays the
// subscribed browsers: it checks VAPID, decrypts, records and fails on
// demand (`herald emulate webpush`, serve --dev, and tests).
//
// It imitates the service the client in provider/webpush talks to and ships
// apart from it: it imports no provider package and keeps its own copy of
// the protocol's codes and error bodies. Import it beside the client as
// webpushemu.
package webpush
