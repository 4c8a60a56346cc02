// Package emulator holds what Herald's provider emulators (apns, fcm,
// webpush, twilio, smtp) share besides their fault engine
// (emulator/internal/fault): the ring of recorded messages, the listener
// lifecycle, the /emulator/* control routes test harnesses drive, the
// Config defaults they have in common, bounded body reading and the
// self-signed TLS certificate (apns, smtp). Each
// emulator keeps its own wire protocol; only the plumbing that was copied
// five times lives here. It is internal to emulator/ so it can change
// with the emulators without becoming public API.
package emulator
