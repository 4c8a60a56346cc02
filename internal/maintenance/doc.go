// Package maintenance holds Herald's leader-only services, one file each
// (River's internal/maintenance): the lease reaper, device pruning, expiry
// of idempotency records, pruning of the delivery policy's expired rows,
// retention of finished notifications and vacuuming of the PostgreSQL
// queue. Each is a leadership.Service; internal/leadership runs them on
// the elected instance only.
//
// It also offers RunLocked, the ShedLock-style lock (lock at most / lock at
// least) that scheduled jobs use so that one instance runs them (S3.7).
package maintenance
