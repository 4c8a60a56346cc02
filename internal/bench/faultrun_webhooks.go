package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
)

// The fault run's outbound webhooks (issue 35 item 5): an endpoint
// subscribed to every event type at a receiver that is down — every
// connection closed unanswered — for FaultRunConfig.WebhookDown from the
// run's start, while the deliveries are sent and Herald is SIGKILLed. Once
// the deliveries have settled and the receiver is up again, Herald is
// SIGKILLed once more when half of the messages have arrived. At the end
// every message written must have arrived, signed, and in order per
// notification; none may be dead.

// faultWebhookPath is the endpoint's path at the receiver.
const faultWebhookPath = "/hooks/faultrun"

// faultWebhooks is the run's receiver and what it was told.
type faultWebhooks struct {
	em        *webhookemu.Emulator
	downUntil time.Time
	schema    string // the run's schema, quoted
}

// startFaultWebhooks starts the receiver down and registers its endpoint.
func startFaultWebhooks(ctx context.Context, st *postgres.Store, schema string, down time.Duration) (*faultWebhooks, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	// Every message is kept: the check reads them all.
	em, err := webhookemu.New(webhookemu.Config{Secrets: []string{secret}, MaxRecorded: 1 << 22})
	if err != nil {
		return nil, err
	}
	if err := em.SetFaults(webhookemu.Faults{Down: true}); err != nil {
		return nil, err
	}
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	if err := st.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh_faultrun",
		URL: em.URL() + faultWebhookPath, Description: "herald faultrun's receiver", Events: []string{}, Enabled: true,
		CreatedAt: now, UpdatedAt: now}, Secret: secret}); err != nil {
		em.Close()
		return nil, err
	}
	return &faultWebhooks{em: em, downUntil: now.Add(down), schema: pgx.Identifier{schema}.Sanitize()}, nil
}

// env lets the herald process reach the loopback receiver and retries
// often enough that the receiver's return is noticed within seconds.
func (w *faultWebhooks) env() []string {
	return []string{
		"HERALD_CALLOUT__ALLOW=127.0.0.0/8",
		"HERALD_WEBHOOKS__RETRY_BASE=500ms",
		"HERALD_WEBHOOKS__RETRY_MAX_DELAY=20s",
		"HERALD_WEBHOOKS__POLL_INTERVAL=250ms",
	}
}

// webhookCounts is where the endpoint's messages are.
type webhookCounts struct{ total, unfinished, dead int }

func (w *faultWebhooks) counts(ctx context.Context, st *postgres.Store) (webhookCounts, error) {
	var c webhookCounts
	// Every event is in the log; those past the cursor are still to be
	// sent, as are the retry table's pending and leased messages.
	err := st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM `+w.schema+`.webhook_events),
	(SELECT count(*) FROM `+w.schema+`.webhook_events e JOIN `+w.schema+`.webhook_endpoints p ON p.id = e.endpoint_id
		WHERE (e.txid, e.seq) > (p.cursor_txid, p.cursor_seq))
	+ (SELECT count(*) FROM `+w.schema+`.webhook_messages WHERE state IN ('pending', 'leased')),
	(SELECT count(*) FROM `+w.schema+`.webhook_messages WHERE state = 'dead')`).Scan(&c.total, &c.unfinished, &c.dead)
	return c, err
}

// drain brings the receiver back at downUntil, kills herald (through
// kill) once half of the messages have arrived, and waits until none is
// unfinished.
func (w *faultWebhooks) drain(ctx context.Context, st *postgres.Store, rep *FaultReport, kill func() error, logf func(string, ...any)) error {
	if wait := time.Until(w.downUntil); wait > 0 {
		logf("webhook receiver down for %v more", wait.Round(time.Second))
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the receiver's return: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	c, err := w.counts(ctx, st)
	if err != nil {
		return err
	}
	w.em.ClearFaults()
	logf("webhook receiver up: %d messages written, %d unfinished, %d connections dropped while down",
		c.total, c.unfinished, w.em.Stats().Dropped)
	killed := false
	for {
		c, err := w.counts(ctx, st)
		if err != nil {
			return err
		}
		if c.unfinished == 0 {
			return nil
		}
		if !killed && w.em.Stats().Distinct*2 >= uint64(c.total) {
			if err := kill(); err != nil {
				return err
			}
			killed = true
			rep.Kills++
			logf("SIGKILL herald mid-stream (%d of %d messages received); restarting", w.em.Stats().Distinct, c.total)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the webhook messages (%d of %d unfinished): %w", c.unfinished, c.total, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// check compares what was written with what arrived: every delivery that
// ended has its delivery.finished in the log, every event of the log
// arrived signed at least once (from the stream or, after a failure, the
// retry table), and a notification's events first arrived in the log's
// order.
func (w *faultWebhooks) check(ctx context.Context, st *postgres.Store, rep *FaultReport, problem func(string, ...any)) error {
	var notWritten int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM `+w.schema+`.deliveries d
	WHERE d.state IN ('sent', 'dead', 'unknown', 'skipped', 'opted_out', 'rate_limited') AND d.id NOT IN (
		SELECT (e.payload::jsonb ->> 'delivery_id')::bigint FROM `+w.schema+`.webhook_events e WHERE e.type = $1)`,
		heraldtype.WebhookDeliveryFinished).Scan(&notWritten); err != nil {
		return err
	}
	if notWritten > 0 {
		rep.WebhookLost += notWritten
		problem("%d deliveries ended without a %s message", notWritten, heraldtype.WebhookDeliveryFinished)
	}
	first := map[string]int{} // event id → its first accepted arrival
	for i, m := range w.em.MessagesTo(faultWebhookPath) {
		if m.Status != http.StatusNoContent {
			continue
		}
		if !m.Verified {
			rep.WebhookUnsigned++
			problem("message %s arrived without a valid signature", m.ID)
		}
		if _, ok := first[m.ID]; !ok {
			first[m.ID] = i
		} else {
			rep.WebhookRedeliveries++
		}
	}
	rows, err := st.Pool().Query(ctx, `SELECT e.event_id, e.ordering_key, coalesce(m.state, '')
	FROM `+w.schema+`.webhook_events e LEFT JOIN `+w.schema+`.webhook_messages m ON m.seq = e.seq ORDER BY e.txid, e.seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	last := map[string]int{} // ordering key → the arrival of its latest message so far
	for rows.Next() {
		var id, key, state string
		if err := rows.Scan(&id, &key, &state); err != nil {
			return err
		}
		rep.WebhookMessages++
		if state == string(heraldtype.WebhookDead) {
			rep.WebhookDead++
			problem("message %s is dead", id)
		}
		at, ok := first[id]
		if !ok {
			rep.WebhookLost++
			problem("message %s (%s) never arrived", id, key)
			continue
		}
		if prev, ok := last[key]; ok && at < prev {
			rep.WebhookOutOfOrder++
			problem("message %s of %s arrived before an earlier one of it", id, key)
		}
		last[key] = max(last[key], at)
	}
	rep.WebhookReceived = len(first)
	return rows.Err()
}
