// Package compat proves that Herald's FCM emulator speaks FCM HTTP v1 the
// way the official Firebase Admin SDK expects: the SDK authenticates against
// the emulator's token endpoint, its messages pass the emulator's
// validation, and every injected error reaches the SDK's own classifiers
// (messaging.IsUnregistered, IsQuotaExceeded, …) with its Retry-After.
//
// It is a separate module so that the Admin SDK, which Herald deliberately
// does not depend on (DEPENDENCIES.md), stays out of Herald's go.mod. Run it
// with:
//
//	cd compat && go test ./...
package compat
