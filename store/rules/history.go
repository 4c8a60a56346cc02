package rules

import "github.com/heraldhq/herald/heraldtype"

// HistorySQL sums each notification's deliveries up into its history
// status and reason (S3.9), by the rules of heraldtype.HistoryStatus:
//
//   - SENT: a delivery was sent (an in_app one is sent when written);
//   - else, while a delivery is pending or leased: DEFERRED if one waits
//     for the end of quiet hours (reason quiet_hours), else PENDING;
//   - else RATE_LIMITED (reason: its code, e.g. duplicate, daily_cap) if
//     a delivery was rate limited, USER_OPTED_OUT (reason: e.g.
//     type_disabled) if one was refused by the preferences;
//   - else FAILED: with the code of a dead, unknown or skipped delivery
//     (the greatest, when they differ), or no_deliveries if it has none.
//
// It selects id, user_id, type, title, created_at, status, reason. The
// caller appends the WHERE conditions on the notification n (its own
// columns and the page cursor, so the inner query walks an index of
// notifications), then HistoryGroupSQL, then any condition on the
// summary (status) after a WHERE, the order and the limit. Tables carry
// the Schema placeholder.
const HistorySQL = `SELECT id, user_id, type, title, created_at, status,
	CASE status WHEN 'DEFERRED' THEN '` + heraldtype.CodeQuietHours + `' WHEN 'RATE_LIMITED' THEN limited_code
		WHEN 'USER_OPTED_OUT' THEN opted_code
		WHEN 'FAILED' THEN CASE WHEN total = 0 THEN 'no_deliveries' ELSE coalesce(failed_code, '') END
		ELSE '' END AS reason
FROM (SELECT *, CASE WHEN sent > 0 THEN 'SENT'
		WHEN live > 0 AND deferred > 0 THEN 'DEFERRED'
		WHEN live > 0 THEN 'PENDING'
		WHEN limited > 0 THEN 'RATE_LIMITED'
		WHEN opted > 0 THEN 'USER_OPTED_OUT'
		ELSE 'FAILED' END AS status
	FROM (SELECT n.id, n.user_id, n.type, n.title, n.created_at, count(d.id) AS total,
		count(*) FILTER (WHERE d.state = 'sent') AS sent,
		count(*) FILTER (WHERE d.state IN ('pending', 'leased')) AS live,
		count(*) FILTER (WHERE d.state = 'pending' AND d.last_error_code = '` + heraldtype.CodeQuietHours + `') AS deferred,
		count(*) FILTER (WHERE d.state = 'rate_limited') AS limited,
		count(*) FILTER (WHERE d.state = 'opted_out') AS opted,
		max(d.last_error_code) FILTER (WHERE d.state = 'rate_limited') AS limited_code,
		max(d.last_error_code) FILTER (WHERE d.state = 'opted_out') AS opted_code,
		max(d.last_error_code) FILTER (WHERE d.state IN ('dead', 'unknown', 'skipped')) AS failed_code
	FROM {s}.notifications n LEFT JOIN {s}.deliveries d ON d.notification_id = n.id`

// HistoryGroupSQL closes HistorySQL after the caller's conditions on n.
const HistoryGroupSQL = ` GROUP BY n.id) AS agg) AS h`
