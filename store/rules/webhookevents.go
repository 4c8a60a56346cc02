package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// The outbound webhook events beside delivery.finished (issue 35 item 4,
// docs/ARCHITECTURE.md "Outbound webhooks"): receipt.recorded,
// device.invalidated, rule_run.finished and dead_letter.created for a
// dead intake event. Each builder is the INSERT of one type's messages
// over the rows a change just wrote — a FROM item the store gives: the
// RETURNING of the change in a PostgreSQL CTE, or, in SQLite, the rows
// read back in the change's transaction — so a message commits with its
// change or not at all, and only a change that happened (an INSERT that
// wrote its row, an UPDATE its guard let through) emits. Each event id is
// computed from what makes the change happen once (a receipt's delivery
// and event, the delivery whose answer invalidated a device, a run's
// version, a dead event's id), so a statement or transaction run again
// cannot mint a second event: it writes nothing, or the same id. As in
// DeliveryFinishedSQL, the uncorrelated EXISTS is a one-time filter:
// without an enabled endpoint the statement reads that tiny table once.

// The dialects of the two stores: PostgreSQL's times are timestamptz,
// SQLite's microseconds since the epoch.
var (
	WebhookPostgres = WebhookDialect{JSONObject: "json_build_object", JSONObjectAgg: "json_object_agg",
		Channels: "unnest(n.channels) AS ch (channel)", Channel: "ch.channel", ByteOrder: ByteOrderPostgres,
		Time: func(col string) string {
			return `to_char(` + col + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
		},
		Hex: func(col string) string { return `encode(convert_to(` + col + `, 'UTF8'), 'hex')` }}
	WebhookSQLite = WebhookDialect{JSONObject: "json_object", JSONObjectAgg: "json_group_object", Nested: "json",
		Channels: "json_each(n.channels) AS ch", Channel: "ch.value", ByteOrder: ByteOrderSQLite,
		Time: func(col string) string {
			return `strftime('%Y-%m-%dT%H:%M:%S', ` + col + ` / 1000000, 'unixepoch') || '.' || substr('00000' || (` + col +
				` % 1000000), -6) || 'Z'`
		},
		Hex: func(col string) string { return `lower(hex(` + col + `))` }}
)

// webhookEventSQL is the INSERT of the messages of eventType, one per row
// of from and subscribed endpoint, with the SQL expressions for the event
// id, the ordering key, the data (a JSON object) and the event's time; and
// is an SQL condition on the rows (" AND …", or "").
func webhookEventSQL(eventType, eventID, orderingKey, data, at, from, and string) string {
	return `INSERT INTO ` + Schema + `webhook_events (` + WebhookEventColumns + `)
SELECT e.id, CAST(` + eventID + ` AS text), '` + eventType + `', ` + orderingKey + `, CAST(` + data + ` AS text), ` + at + `
FROM ` + from + ` JOIN ` + Schema + `webhook_endpoints e ON ` + WebhookSubscribed("e", "'"+eventType+"'") + `
WHERE EXISTS (SELECT 1 FROM ` + Schema + `webhook_endpoints WHERE enabled)` + and
}

// ReceiptReturning ends a receipt's INSERT (ReceiptSQL, InboxReceiptSQL)
// whose rows feed ReceiptRecordedSQL in a PostgreSQL CTE: the columns it
// reads. ON CONFLICT DO NOTHING returns no row for a receipt recorded
// before, so a repeated receipt emits nothing.
const ReceiptReturning = `RETURNING delivery_id, at, error_code, error`

// ReceiptRecordedSQL is the INSERT of the receipt.recorded messages of
// the receipts in from — a FROM item aliased r with the columns of
// ReceiptReturning, receipt rows just written — one per receipt and
// subscribed endpoint. The event id is the delivery and the event, which
// the unique index delivery_attempts_receipt holds once; the ordering key
// is the notification, as for its delivery's events; the data's
// message_id is the one the app reported (heraldtype.DeliveryKey), at the
// receipt's time and the action its click named.
func ReceiptRecordedSQL(d WebhookDialect, from string) string {
	return webhookEventSQL(heraldtype.WebhookReceiptRecorded, `'evt_r' || r.delivery_id || '_' || r.error_code`, `rd.notification_id`,
		d.JSONObject+`('message_id', rd.notification_id || '.' || r.delivery_id, 'delivery_id', r.delivery_id,
		'notification_id', rd.notification_id, 'user_id', rd.user_id, 'channel', rd.channel, 'event', r.error_code,
		'at', `+d.Time("r.at")+`, 'action', r.error)`,
		"r.at", from+` JOIN `+Schema+`deliveries rd ON rd.id = r.delivery_id`, "")
}

// DeviceInvalidatedSQL is the INSERT of the device.invalidated messages
// of the devices in from — a FROM item aliased x with the columns
// device_id, user_id, platform, reason (the device's invalid_reason),
// delivery_id and replay_count (of the delivery whose provider answer
// invalidated it) and at, one row per device the invalidation's guarded
// UPDATE changed. The event id is that delivery's: it dies once per
// replay, so the answer is applied once. The ordering key is the device.
func DeviceInvalidatedSQL(d WebhookDialect, from string) string {
	return deviceInvalidatedSQL(d, from, `'evt_i' || x.delivery_id || 'r' || x.replay_count`, "x.delivery_id")
}

// DeviceTokenMovedSQL is the INSERT of the device.invalidated messages of
// the devices in from — a FROM item aliased x with the columns device_id,
// user_id, platform, reason and at — whose token another device's
// registration just took (reason token_moved; no delivery). micros is the
// SQL placeholder of the registration's time in unix microseconds, as
// text: the event id is the device's id (in hexadecimal: a device id is
// the caller's, and webhook-id is a header) and that time, and a
// registration run again finds the token gone and invalidates nothing.
func DeviceTokenMovedSQL(d WebhookDialect, from, micros string) string {
	return deviceInvalidatedSQL(d, from, `'evt_v' || `+d.Hex("x.device_id")+` || 't' || CAST(`+micros+` AS text)`, "NULL")
}

func deviceInvalidatedSQL(d WebhookDialect, from, eventID, deliveryID string) string {
	return webhookEventSQL(heraldtype.WebhookDeviceInvalidated, eventID, `x.device_id`,
		d.JSONObject+`('device_id', x.device_id, 'user_id', x.user_id, 'platform', x.platform, 'channel', '`+
			string(heraldtype.ChannelPush)+`', 'reason', x.reason, 'delivery_id', `+deliveryID+`)`,
		"x.at", from, "")
}

// RuleRunFinishedSQL is the INSERT of the rule_run.finished messages of
// the runs in from — a FROM item aliased x with the columns of rule_runs
// — that are done or failed, at their finished_at. eventID is the SQL
// placeholder of the event id, RuleRunEventID of the run's version after
// the write that finished it; the ordering key is the run id.
func RuleRunFinishedSQL(d WebhookDialect, from, eventID string) string {
	return webhookEventSQL(heraldtype.WebhookRuleRunFinished, eventID, `x.run_id`,
		d.JSONObject+`('run_id', x.run_id, 'rule', x.rule, 'source', x.source, 'event', x.event, 'event_id', x.event_id,
		'subject', x.subject, 'state', x.state, 'recipients', x.recipients, 'enqueued', x.enqueued, 'last_error', x.last_error)`,
		"x.finished_at", from, ` AND x.state IN ('`+string(heraldtype.RunDone)+`', '`+string(heraldtype.RunFailed)+`')`)
}

// RuleRunColumns are the columns of rule_runs RuleRunFinishedSQL reads.
const RuleRunColumns = `rule, run_id, source, event, event_id, subject, state, recipients, enqueued, last_error, finished_at`

// RuleRunFinishedFrom is the run of rule and runID (SQL expressions) as
// RuleRunFinishedSQL's FROM item, read in the transaction that finished
// it.
func RuleRunFinishedFrom(rule, runID string) string {
	return `(SELECT ` + RuleRunColumns + ` FROM ` + Schema + `rule_runs WHERE rule = ` + rule + ` AND run_id = ` + runID + `) x`
}

// RuleRunEventID is the event id of rule_run.finished for the run of rule
// and runID at version: the version its finishing write gave it. Every
// write of a run moves its version under a guard on the one before, so a
// run finishes once per version (again only after RetryRuleRun restarted
// it), and a write run again finds the version moved and writes nothing.
// The rule and run are hashed: a run id holds the event's id, which the
// sender chose, and webhook-id is a header.
func RuleRunEventID(rule, runID string, version int64) string {
	h := sha256.Sum256([]byte(rule + "\x00" + runID))
	return "evt_u" + hex.EncodeToString(h[:16]) + "v" + strconv.FormatInt(version, 10)
}

// DeadEventColumns are the columns of dead_events DeadEventCreatedSQL
// reads.
const DeadEventColumns = `id, topic, partition, "offset", kind, error, attempts, created_at`

// DeadEventCreatedSQL is the INSERT of the dead_letter.created messages
// of the dead intake events in from — a FROM item aliased x with the
// columns of dead_events — each just written (a record dead-lettered
// again is kept once and emits nothing). The event id is the dead event's
// id; the ordering key its topic and partition, so a partition's dead
// letters arrive in the order they were kept.
func DeadEventCreatedSQL(d WebhookDialect, from string) string {
	return webhookEventSQL(heraldtype.WebhookDeadLetterCreated, `'evt_k' || x.id`, `x.topic || ':' || x.partition`,
		d.JSONObject+`('list', 'events', 'dead_event_id', x.id, 'topic', x.topic, 'partition', x.partition, 'offset', x."offset",
		'kind', x.kind, 'error', x.error, 'attempts', x.attempts)`,
		"x.created_at", from, "")
}
