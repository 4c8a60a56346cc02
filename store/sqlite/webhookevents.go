package sqlite

import (
	"context"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/rules"
)

// The outbound webhook events beside delivery.finished (issue 35 item 4,
// store/rules/webhookevents.go): SQLite cannot feed an INSERT … RETURNING
// to another INSERT, so each change's messages are written by a statement
// of their own in the change's transaction, after it, from the rows it
// wrote, read back — and only when the change wrote them.

// The statements, built once. ?1 is the event id of a rule run's, the
// other markers name the rows written.
var (
	deviceInvalidatedSQL = rules.Unqualified(rules.DeviceInvalidatedSQL(rules.WebhookSQLite,
		`(SELECT v.id AS device_id, v.user_id, v.platform, v.invalid_reason AS reason, d.id AS delivery_id, d.replay_count,
	v.invalidated_at AS at FROM deliveries d JOIN devices v ON v.id = d.device_id WHERE d.id = ?1) x`)) + ` ORDER BY e.id`
	ruleRunFinishedSQL = rules.Unqualified(rules.RuleRunFinishedSQL(rules.WebhookSQLite,
		rules.RuleRunFinishedFrom("?2", "?3"), "?1")) + ` ORDER BY e.id`
	deadEventCreatedSQL = rules.Unqualified(rules.DeadEventCreatedSQL(rules.WebhookSQLite,
		`(SELECT `+rules.DeadEventColumns+` FROM dead_events WHERE fingerprint = ?1) x`)) + ` ORDER BY e.id`
)

// moveToken takes d's token from every other device that holds it, and
// writes the device.invalidated messages of those it invalidates — the
// ones that were not INVALID already, read first (the single writer keeps
// them so) when an endpoint is enabled.
func (s *Store) moveToken(ctx context.Context, tx *writeTx, d heraldtype.Device, now time.Time) error {
	hooks, err := webhooksEnabled(ctx, tx)
	if err != nil {
		return err
	}
	var active []any
	if hooks {
		rows, err := s.query(ctx, tx, `SELECT id FROM devices WHERE token = ? AND id <> ? AND status <> 'INVALID'`, d.Token, d.ID)
		if err != nil {
			return formatError(err, "device token")
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return formatError(err, "device token")
			}
			active = append(active, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err, "device token")
		}
	}
	_, err = s.exec(ctx, tx, `UPDATE devices SET token = '', status = 'INVALID', invalidated_at = ?,
	invalid_reason = 'token_moved', updated_at = ?
WHERE token = ? AND id <> ?`, micros(now), micros(now), d.Token, d.ID)
	if err != nil || len(active) == 0 {
		return formatError(err, "device token")
	}
	_, err = s.exec(ctx, tx, rules.Unqualified(rules.DeviceTokenMovedSQL(rules.WebhookSQLite,
		`(SELECT id AS device_id, user_id, platform, invalid_reason AS reason, invalidated_at AS at FROM devices
	WHERE id IN (`+marks(len(active))+`)) x`, "?"))+` ORDER BY x.device_id, e.id`, // the time's ? comes first
		append([]any{strconv.FormatInt(now.UnixMicro(), 10)}, active...)...)
	return formatError(err, "webhook messages")
}

// receiptMessages writes the receipt.recorded messages of the receipts of
// event just written on the deliveries ids.
func (s *Store) receiptMessages(ctx context.Context, tx *writeTx, event heraldtype.ReceiptEvent, ids []any) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.exec(ctx, tx, rules.Unqualified(rules.ReceiptRecordedSQL(rules.WebhookSQLite,
		`(SELECT delivery_id, at, error_code, error FROM delivery_attempts
	WHERE outcome = '`+string(heraldtype.OutcomeReceipt)+`' AND error_code = ? AND delivery_id IN (`+marks(len(ids))+`)) r`))+
		` ORDER BY r.delivery_id, e.id`, append([]any{string(event)}, ids...)...)
	return formatError(err, "webhook messages")
}

// ruleRunFinished writes the rule_run.finished messages of the run of rule
// and runID that the transaction just finished, at its version.
func (s *Store) ruleRunFinished(ctx context.Context, tx *writeTx, rule, runID string, version int64) error {
	_, err := s.exec(ctx, tx, ruleRunFinishedSQL, rules.RuleRunEventID(rule, runID, version), rule, runID)
	return formatError(err, "webhook messages")
}

// webhooksEnabled reports whether an endpoint is enabled: a batch that
// would write many messages' statements probes once first.
func webhooksEnabled(ctx context.Context, tx *writeTx) (bool, error) {
	var some bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled)`).Scan(&some)
	return some, formatError(err, "webhook endpoints")
}
