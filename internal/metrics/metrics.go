// Package metrics holds Herald's Prometheus collectors. One Metrics value is
// created per Client and registered on the registry the embedder chooses, so
// there is no package-level state and two Clients in one process (as in
// tests) never collide.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics is every collector Herald exports.
type Metrics struct {
	// Accepted counts notifications written by a trigger (not replays).
	Accepted *prometheus.CounterVec // labels: type
	// Sent counts deliveries the provider accepted.
	Sent *prometheus.CounterVec // labels: provider
	// Failed counts failed attempts, whatever happens next.
	Failed *prometheus.CounterVec // labels: provider, code
	// Retried counts failed attempts that were scheduled again.
	Retried *prometheus.CounterVec // labels: provider, code
	// Dead counts deliveries that ended dead.
	Dead *prometheus.CounterVec // labels: provider, code
	// Skipped counts deliveries skipped because their device became unusable.
	Skipped *prometheus.CounterVec // labels: reason
	// Unknown counts at_most_once deliveries whose lease expired mid-send.
	Unknown prometheus.Counter
	// Requeued counts at_least_once deliveries whose expired lease was reclaimed.
	Requeued prometheus.Counter
	// InvalidatedTokens counts devices invalidated by a provider answer.
	InvalidatedTokens *prometheus.CounterVec // labels: provider, reason
	// Throttled counts throttle (quota) answers that slowed a sender down.
	Throttled *prometheus.CounterVec // labels: provider
	// QueueDepth is the number of deliveries in each of store.QueueDepthStates.
	QueueDepth *prometheus.GaugeVec // labels: state
	// SendLatency is the time a provider took to answer one send.
	SendLatency *prometheus.HistogramVec // labels: provider
	// EndToEndLatency is the time from run_at (due) to the provider's answer
	// for sent deliveries.
	EndToEndLatency *prometheus.HistogramVec // labels: provider
	// PolicyDecisions counts the delivery policy's decisions (S3.12):
	// outcome allowed, deferred, opted_out, rate_limited or policy_error,
	// reason the code (duplicate, daily_cap, quiet_hours, type_disabled, …;
	// "none" when allowed).
	PolicyDecisions *prometheus.CounterVec // labels: outcome, reason

	// Reminders counts what the reminder scheduler did with due
	// occurrences (S2.7): claimed, enqueued, skipped (quiet hours,
	// catch-up), collided (moved by the per-user gap), rescued (claimed
	// again after a scheduler's lease expired), released, raced (the
	// reminder changed between claim and fire).
	Reminders *prometheus.CounterVec // labels: event
	// RemindersStopped counts reminders stopped, by stop reason.
	RemindersStopped *prometheus.CounterVec // labels: reason
	// ReminderLag is how late an occurrence was enqueued: now − its due
	// time (S2.7).
	ReminderLag prometheus.Histogram
	// ReminderBatchDuration and RuleBatchDuration are how long one batch
	// of the reminder scheduler and of a rule run took (S2.7), by outcome
	// (BatchOK, BatchError).
	ReminderBatchDuration *prometheus.HistogramVec // labels: outcome
	RuleBatchDuration     *prometheus.HistogramVec // labels: outcome

	// Campaigns counts campaign runs by event (S3.7): started (a due
	// time), resumed (a run picked up again: after a crash, a hand-over,
	// the lock's at-most, or a re-run by hand),
	// done, failed (the run reached nobody it considered), locked (the
	// campaign's cluster lock was held elsewhere), missed (due times the
	// catch-up policy passed over). Never labelled by campaign name, so
	// the series stay bounded.
	Campaigns *prometheus.CounterVec // labels: event
	// CampaignRecipients counts the users campaign runs considered, by
	// outcome: enqueued, skipped (already reached by the run),
	// fetch_failed, render_failed.
	CampaignRecipients *prometheus.CounterVec // labels: outcome
	// CampaignFetchErrors counts failed calls to campaigns' fetch
	// endpoints (timeout, transport error, non-2xx, a bad answer).
	CampaignFetchErrors prometheus.Counter

	// Every label value goes through one of these sets (Type, Provider,
	// Code), so the number of series stays bounded whatever triggers and
	// providers send.
	// Events counts the events the rule engine was given, by outcome
	// (issue 20 item 6, S3.12): applied (at least one rule was for it),
	// no_rule, stale (not newer than its subject's last), replayed (a
	// redelivery answered from its record).
	Events *prometheus.CounterVec // labels: outcome
	// RuleDecisions counts each rule's decisions on events, by rule and
	// outcome: detected, not_detected, render_failed (its message could
	// not be rendered: a field a template needs that the event lacks, a
	// template over its budget), error (the event lacks what the detector
	// needs, the rendered message is refused).
	RuleDecisions *prometheus.CounterVec // labels: rule, outcome
	// TemplateOverBudget counts renders stopped by their budget (issue 31
	// item 1), by surface (rule, rule_dry_run, campaign) and the limit
	// that stopped them (steps, bytes, time).
	TemplateOverBudget *prometheus.CounterVec // labels: surface, limit
	// RuleRecipients counts the users rule runs enqueued a notification
	// for (fanned out), by rule; the pipeline's policy decisions
	// (rate_limited, opted_out, …) are PolicyDecisions, by type.
	RuleRecipients *prometheus.CounterVec // labels: rule
	// RuleAudience is the size of each finished rule run's audience.
	RuleAudience *prometheus.HistogramVec // labels: rule
	// RuleRuns counts rule runs by event: started, resumed, done, failed.
	RuleRuns *prometheus.CounterVec // labels: event
	// Receipts counts the receipts apps reported (issue 35 item 1) and
	// e-mails' tracked opens and clicks (item 2), by event (delivered,
	// opened, dismissed, clicked: the only ones an app may send or e-mail
	// tracking records) and result (recorded, duplicate, not_found — a
	// message Herald does not have, or another user's).
	Receipts *prometheus.CounterVec // labels: event, result
	// Cancelled counts the deliveries a cancel decided (issue 36 item 4),
	// by how it selected them (id, key, key_all_users) and what became of
	// each: cancelled, sent (in flight, sent before the cancel returned),
	// not_sent (in flight, ended otherwise) or in_flight (still leased
	// when the cancel stopped waiting).
	Cancelled *prometheus.CounterVec // labels: selector, outcome
	// WebhookMessages counts outbound webhook attempts (issue 35 item 4)
	// by event type and outcome (sent, retried, dead, held); WebhookSend
	// times them, by outcome.
	WebhookMessages *prometheus.CounterVec   // labels: type, outcome
	WebhookSend     *prometheus.HistogramVec // labels: outcome
	// WebhookPending is how many webhook messages wait to be sent or are
	// being sent, of every endpoint, counted up to
	// webhook.PendingCountCap.
	WebhookPending prometheus.Gauge
	// Digests counts the digests the digest workers settled, by outcome:
	// sent (one notification), empty (first: immediate with no trigger
	// after the first), failed (not rendered; issue 36 item 1).
	Digests *prometheus.CounterVec // labels: outcome
	// Escalations counts the escalation steps the escalation workers
	// settled, by outcome: escalated (sent on its channels), stopped (a
	// receipt was found at its fire), failed (its notification or user is
	// gone; issue 36 item 3). Steps a receipt or a cancel stops in its
	// own transaction are not counted here: the steps' rows hold them.
	Escalations *prometheus.CounterVec // labels: outcome

	types, providers, codes, rules labelSet
}

// New creates the collectors and registers them on reg (if not nil).
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_notifications_accepted_total", Help: "Notifications accepted by a trigger.",
		}, []string{"type"}),
		Sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_deliveries_sent_total", Help: "Deliveries accepted by their provider.",
		}, []string{"provider"}),
		Failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_delivery_attempts_failed_total", Help: "Failed delivery attempts by provider error code.",
		}, []string{"provider", "code"}),
		Retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_deliveries_retried_total", Help: "Failed attempts scheduled for a retry.",
		}, []string{"provider", "code"}),
		Dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_deliveries_dead_total", Help: "Deliveries that failed permanently or ran out of attempts.",
		}, []string{"provider", "code"}),
		Skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_deliveries_skipped_total", Help: "Deliveries skipped because their device became unusable.",
		}, []string{"reason"}),
		Unknown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_deliveries_unknown_total", Help: "at_most_once deliveries whose lease expired mid-send (never resent).",
		}),
		Requeued: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_deliveries_requeued_total", Help: "at_least_once deliveries reclaimed after their lease expired.",
		}),
		InvalidatedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_tokens_invalidated_total", Help: "Device tokens invalidated by a provider answer.",
		}, []string{"provider", "reason"}),
		Throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_sender_throttled_total", Help: "Quota answers that slowed a sender down.",
		}, []string{"provider"}),
		QueueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_queue_depth", Help: "Deliveries queued or waiting for an operator, by state (pending, leased, dead, unknown).",
		}, []string{"state"}),
		SendLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_send_duration_seconds", Help: "Provider send latency.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"provider"}),
		EndToEndLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "herald_delivery_latency_seconds", Help: "Time from a delivery being due to its provider accepting it.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}, []string{"provider"}),
		PolicyDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_policy_decisions_total", Help: "Delivery policy decisions by outcome and reason.",
		}, []string{"outcome", "reason"}),
	}
	m.Reminders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_reminder_occurrences_total", Help: "Reminder occurrences by what the scheduler did with them.",
	}, []string{"event"})
	m.RemindersStopped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_reminders_stopped_total", Help: "Reminders stopped, by reason.",
	}, []string{"reason"})
	m.ReminderLag = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "herald_reminder_lag_seconds", Help: "Time from an occurrence's due time to its enqueue.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	})
	m.Campaigns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_campaign_runs_total", Help: "Campaign runs by event (started, resumed, done, failed, locked, missed).",
	}, []string{"event"})
	m.CampaignRecipients = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_campaign_recipients_total", Help: "Users campaign runs considered, by outcome.",
	}, []string{"outcome"})
	m.CampaignFetchErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_campaign_fetch_errors_total", Help: "Failed calls to campaign fetch endpoints.",
	})
	m.Events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_events_total", Help: "Events given to the rule engine, by outcome (applied, no_rule, stale, replayed, conflict).",
	}, []string{"outcome"})
	m.RuleDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_rule_decisions_total", Help: "Rule decisions on events, by rule and outcome (detected, not_detected, render_failed, error).",
	}, []string{"rule", "outcome"})
	m.TemplateOverBudget = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_template_over_budget_total", Help: "Template renders stopped by their budget, by surface (rule, rule_dry_run, campaign, digest) and limit (steps, bytes, time).",
	}, []string{"surface", "limit"})
	m.RuleRecipients = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_rule_recipients_total", Help: "Users rule runs enqueued a notification for, by rule.",
	}, []string{"rule"})
	m.RuleAudience = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "herald_rule_audience_size", Help: "Audience size of finished rule runs, by rule.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10),
	}, []string{"rule"})
	m.RuleRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_rule_runs_total", Help: "Rule runs by event (started, resumed, done, failed).",
	}, []string{"event"})
	m.Cancelled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_deliveries_cancelled_total", Help: "Deliveries a cancel decided, by selector (id, key, key_all_users) and outcome (cancelled, sent, not_sent, in_flight).",
	}, []string{"selector", "outcome"})
	m.Receipts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_receipts_total", Help: "Receipts apps reported and e-mails' tracked opens and clicks, by event (delivered, opened, dismissed, clicked) and result (recorded, duplicate, not_found).",
	}, []string{"event", "result"})
	m.WebhookMessages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_webhook_messages_total", Help: "Outbound webhook attempts, by event type and outcome (sent, retried, dead, held).",
	}, []string{"type", "outcome"})
	m.WebhookSend = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "herald_webhook_send_duration_seconds", Help: "Time of one outbound webhook attempt, by outcome.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 13),
	}, []string{"outcome"})
	m.Digests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_digests_total", Help: "Digests settled by the digest workers, by outcome (sent, empty, failed).",
	}, []string{"outcome"})
	m.Escalations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_escalations_total", Help: "Escalation steps settled by the escalation workers, by outcome (escalated, stopped, failed).",
	}, []string{"outcome"})
	m.WebhookPending = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "herald_webhook_messages_pending", Help: "Outbound webhook messages waiting to be sent or being sent (pending or leased), of every endpoint; the count stops at 100000.",
	})
	// Herald's own outcome and reason values: always declared.
	m.codes.add("none", "allowed", "deferred", "opted_out", "rate_limited", "policy_error")
	batch := m.newBatchDurations()
	if reg != nil {
		reg.MustRegister(batch...)
		reg.MustRegister(m.Accepted, m.Sent, m.Failed, m.Retried, m.Dead, m.Skipped, m.Unknown,
			m.Requeued, m.InvalidatedTokens, m.Throttled, m.QueueDepth, m.SendLatency, m.EndToEndLatency,
			m.PolicyDecisions, m.Reminders, m.RemindersStopped, m.ReminderLag,
			m.Events, m.RuleDecisions, m.TemplateOverBudget, m.RuleRecipients, m.RuleAudience, m.RuleRuns, m.Receipts, m.Cancelled,
			m.WebhookMessages, m.WebhookSend, m.WebhookPending, m.Digests, m.Escalations, m.Campaigns, m.CampaignRecipients, m.CampaignFetchErrors)
	}
	return m
}
