package metrics

import "github.com/prometheus/client_golang/prometheus"

// Batch outcomes, the one label of the batch-duration histograms: a
// bounded set whatever the reminders and rules are called.
const (
	BatchOK    = "ok"
	BatchError = "error"
)

// batchBuckets run from 1 ms to about 33 s: a batch is a claim, its
// decisions and one transaction (reminders), or an audience page and one
// transaction (a rule run).
var batchBuckets = prometheus.ExponentialBuckets(0.001, 2, 16)

// newBatchDurations makes the batch processing-time histograms (S2.7's
// processing_time_ms, issue 30 item 6).
func (m *Metrics) newBatchDurations() []prometheus.Collector {
	m.ReminderBatchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "herald_reminder_batch_duration_seconds",
		Help:    "Time the reminder scheduler took for one batch: claim, decide, write; by outcome (ok, error).",
		Buckets: batchBuckets,
	}, []string{"outcome"})
	m.RuleBatchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "herald_rule_batch_duration_seconds",
		Help:    "Time the rule runner took for one batch of a rule run: audience page, messages, write; by outcome (ok, error).",
		Buckets: batchBuckets,
	}, []string{"outcome"})
	return []prometheus.Collector{m.ReminderBatchDuration, m.RuleBatchDuration}
}
