// Package recommend is an in-process recommendation service of the shape a
// campaign's content fetch calls: it answers POST {"campaign","run",
// "user_ids"} with {"users":{id:{"items":[…],"fields":{…}}}}, each user's
// items picked from a small product catalog by the user's id, so the same
// user gets the same picks every run. It records every call and fails on
// demand through the fault engine every emulator shares (`herald emulate
// recommend`, serve --dev, and tests).
//
// It imports nothing of Herald's and keeps its own copy of the request and
// answer shapes, as the other emulators keep their provider's protocol.
package recommend
