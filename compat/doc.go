// Package compat holds Herald to outside software that Herald itself does
// not depend on (DEPENDENCIES.md), in a separate module so that none of it
// enters Herald's go.mod:
//
//   - the FCM emulator speaks FCM HTTP v1 the way the official Firebase
//     Admin SDK expects: the SDK authenticates against the emulator's token
//     endpoint, its messages pass the emulator's validation, and every
//     injected error reaches the SDK's own classifiers
//     (messaging.IsUnregistered, IsQuotaExceeded, …) with its Retry-After;
//   - api/openapi.yaml passes Redocly CLI's lint with no error
//     (TestOpenAPILint), has no breaking change since the last released
//     document in api/released unless its major version is raised (oasdiff;
//     TestOpenAPIBreakingChanges), and is enough to write a working client in
//     another language: TypeScript types generated from it compile with the
//     smoke test in node/, which runs against a real `herald serve --dev`
//     (TestTypeScriptClient);
//   - Herald's outbound webhook signatures agree with the published Go
//     library of the Standard Webhooks specification, both ways and across
//     a secret rotation (TestWebhookSignaturesAgreeWithTheStandardWebhooksLibrary).
//
// The lint and the TypeScript test need Node (18.17 or later) and npm; they
// skip without them, except with CI=true, and run `npm ci` in node/ when
// node_modules is missing. Run the module with:
//
//	cd compat && go test ./...
package compat
