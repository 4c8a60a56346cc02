// Package emulator holds what Herald's provider emulators (apns, fcm,
// webpush, twilio, smtp) share: the ring of recorded messages, the
// per-target Retry-After bookkeeping that counts early retries, and the
// /emulator/* control routes test harnesses drive. Each emulator keeps its
// own wire protocol, faults and stats; only the plumbing that was copied
// five times lives here. It is internal to emulator/ so it can change
// with the emulators without becoming public API.
package emulator
