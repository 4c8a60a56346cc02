// Package fcm is an in-process Firebase Cloud Messaging HTTP v1 server: an OAuth2
// token endpoint, messages:send with FCM's validation and error bodies,
// recording and fault injection (`herald emulate fcm`, serve --dev,
// `herald bench`, and tests).
//
// It imitates the service the client in provider/fcm talks to and ships
// apart from it: it imports no provider package and keeps its own copy of
// the protocol's codes and error bodies. Import it beside the client as
// fcmemu.
package fcm
