package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres"
)

// FaultReport counts how every delivery of a fault run ended, and what
// went wrong if anything did.
type FaultReport struct {
	Notifications    int `json:"notifications"`
	Kills            int `json:"kills"`
	PostgresRestarts int `json:"postgres_restarts"`

	Deliveries int `json:"deliveries"`
	Sent       int `json:"sent"`
	// DeadUnregistered: dead because the token was UNREGISTERED.
	DeadUnregistered int `json:"dead_unregistered"`
	// DeadExhausted: dead with a temporary or throttled code after its
	// last attempt.
	DeadExhausted int `json:"dead_exhausted"`
	// SkippedInvalidated: skipped because an earlier UNREGISTERED answer
	// invalidated the device.
	SkippedInvalidated int `json:"skipped_invalidated"`
	// UnknownAtMostOnce: at_most_once deliveries whose process was killed
	// mid-send; by design never resent (S1.3).
	UnknownAtMostOnce int `json:"unknown_at_most_once"`
	// DuplicatesAtLeastOnce: at_least_once deliveries the provider got
	// twice because a kill landed between the send and its recorded
	// outcome (the app drops them by messageId, S0.5).
	DuplicatesAtLeastOnce int `json:"duplicates_at_least_once"`

	// Everything below must be zero.
	Lost                 int    `json:"lost"`
	WrongDead            int    `json:"wrong_dead"`
	WrongSkipped         int    `json:"wrong_skipped"`
	DuplicatesAtMostOnce int    `json:"duplicates_at_most_once"`
	SentNeverReceived    int    `json:"sent_never_received"`
	EarlyRetries         uint64 `json:"early_retries"`

	// The outbound webhooks' figures, with FaultRunConfig.WebhookDown:
	// the messages written, the distinct ones received, and those
	// received again (at least once: a kill between a send and its
	// record). The last four must be zero.
	WebhookDown         time.Duration `json:"webhook_down,omitempty"`
	WebhookMessages     int           `json:"webhook_messages,omitempty"`
	WebhookReceived     int           `json:"webhook_received,omitempty"`
	WebhookRedeliveries int           `json:"webhook_redeliveries,omitempty"`
	WebhookLost         int           `json:"webhook_lost,omitempty"`
	WebhookOutOfOrder   int           `json:"webhook_out_of_order,omitempty"`
	WebhookDead         int           `json:"webhook_dead,omitempty"`
	WebhookUnsigned     int           `json:"webhook_unsigned,omitempty"`

	Rejected map[string]uint64 `json:"emulator_errors"`
	Problems []string          `json:"problems,omitempty"`
}

// temporaryCodes are the codes a delivery may die with after its last
// attempt: FCM's retryable answers.
var temporaryCodes = map[string]bool{"UNAVAILABLE": true, "INTERNAL": true, "QUOTA_EXCEEDED": true}

// check classifies every delivery against what the emulator received.
func (r *FaultReport) check(ctx context.Context, st *postgres.Store, pop *population, sends map[string]uint32, maxAttempts int) error {
	deadDevice := map[string]bool{}
	for u := range pop.users {
		if pop.dead[u][0] {
			deadDevice[pop.users[u]+"-d0"] = true
		}
	}
	problem := r.problem
	f := heraldtype.DeliveryFilter{Limit: 1000}
	for {
		page, next, err := st.ListDeliveries(ctx, f)
		if err != nil {
			return err
		}
		for i := range page {
			r.classify(&page[i], sends[page[i].IdempotencyKey()], deadDevice, maxAttempts, problem)
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	want := r.Notifications // one android device per user
	if r.Deliveries != want {
		r.Lost += want - r.Deliveries
		problem("%d deliveries recorded, want %d", r.Deliveries, want)
	}
	return nil
}

// problem keeps the first 20 problems' descriptions.
func (r *FaultReport) problem(format string, args ...any) {
	if len(r.Problems) < 20 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

func (r *FaultReport) classify(d *heraldtype.Delivery, n uint32, deadDevice map[string]bool, maxAttempts int, problem func(string, ...any)) {
	r.Deliveries++
	key := d.IdempotencyKey()
	if d.Guarantee == heraldtype.AtMostOnce && n > 1 {
		r.DuplicatesAtMostOnce++
		problem("at_most_once delivery %s reached the provider %d times", key, n)
	}
	switch d.State {
	case heraldtype.StateSent:
		r.Sent++
		if n == 0 {
			r.SentNeverReceived++
			problem("delivery %s is sent but the provider never received it", key)
		}
		if d.Guarantee == heraldtype.AtLeastOnce && n > 1 {
			r.DuplicatesAtLeastOnce++
		}
	case heraldtype.StateDead:
		switch {
		case d.LastErrorCode == "UNREGISTERED" && deadDevice[d.DeviceID]:
			r.DeadUnregistered++
		case temporaryCodes[d.LastErrorCode] && d.Attempt >= maxAttempts:
			r.DeadExhausted++
		default:
			r.WrongDead++
			problem("delivery %s dead with %s after %d of %d attempts", key, d.LastErrorCode, d.Attempt, maxAttempts)
		}
	case heraldtype.StateSkipped:
		if deadDevice[d.DeviceID] {
			r.SkippedInvalidated++
		} else {
			r.WrongSkipped++
			problem("delivery %s skipped (%s) but its token is live", key, d.LastErrorCode)
		}
	case heraldtype.StateUnknown:
		if d.Guarantee == heraldtype.AtMostOnce {
			r.UnknownAtMostOnce++
		} else {
			r.Lost++
			problem("at_least_once delivery %s ended unknown", key)
		}
	default:
		r.Lost++
		problem("delivery %s ended %s", key, d.State)
	}
}

// verdict fails the run if any must-be-zero count is not.
func (r *FaultReport) verdict() error {
	if r.EarlyRetries > 0 {
		r.Problems = append(r.Problems, count(int(r.EarlyRetries), "send", "sends")+" came before the Retry-After the emulator asked for")
	}
	if r.Lost+r.WrongDead+r.WrongSkipped+r.DuplicatesAtMostOnce+r.SentNeverReceived > 0 || r.EarlyRetries > 0 ||
		r.WebhookLost+r.WebhookOutOfOrder+r.WebhookDead+r.WebhookUnsigned > 0 {
		return fmt.Errorf("fault run failed: %s", strings.Join(r.Problems, "; "))
	}
	return nil
}

// Write prints the counts as a table.
func (r *FaultReport) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("notifications", r.Notifications)
	row("herald SIGKILLs + restarts", r.Kills)
	row("PostgreSQL restarts", r.PostgresRestarts)
	row("deliveries", r.Deliveries)
	row("  sent", r.Sent)
	row("  dead: UNREGISTERED", r.DeadUnregistered)
	row("  dead: attempts exhausted (temporary codes)", r.DeadExhausted)
	row("  skipped: token invalidated", r.SkippedInvalidated)
	row("  unknown: at_most_once killed mid-send", r.UnknownAtMostOnce)
	row("at_least_once sent twice (crash after send)", r.DuplicatesAtLeastOnce)
	row("LOST (must be 0)", r.Lost)
	row("dead with a wrong code (must be 0)", r.WrongDead)
	row("skipped with a live token (must be 0)", r.WrongSkipped)
	row("at_most_once sent twice (must be 0)", r.DuplicatesAtMostOnce)
	row("sent but never received (must be 0)", r.SentNeverReceived)
	row("sends before Retry-After (must be 0)", r.EarlyRetries)
	if r.WebhookDown > 0 {
		row("webhook receiver down from the start for", r.WebhookDown)
		row("webhook messages written", r.WebhookMessages)
		row("  received (distinct, signed)", r.WebhookReceived)
		row("  received again (crash after send)", r.WebhookRedeliveries)
		row("webhook messages lost (must be 0)", r.WebhookLost)
		row("webhook messages out of order per notification (must be 0)", r.WebhookOutOfOrder)
		row("webhook messages dead (must be 0)", r.WebhookDead)
		row("webhook messages unsigned (must be 0)", r.WebhookUnsigned)
	}
	codes := make([]string, 0, len(r.Rejected))
	for c, n := range r.Rejected {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(codes)
	row("emulator error answers", strings.Join(codes, ", "))
	for _, p := range r.Problems {
		row("PROBLEM", p)
	}
	return tw.Flush()
}
