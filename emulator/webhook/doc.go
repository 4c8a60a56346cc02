// Package webhook is a receiver of outbound webhooks, as a customer's
// endpoint would run one: it takes any POST, checks its Standard Webhooks
// signature (webhook-id, webhook-timestamp, webhook-signature) against the
// secrets it was given, records each message, counts redeliveries of an
// id it already accepted, and fails on demand through the fault engine
// every emulator shares (`herald emulate webhook`, serve --dev, tests).
//
// It imports nothing of Herald's: its signature check is written from the
// specification (standardwebhooks.com), so it checks Herald's signer
// rather than repeating it.
package webhook
