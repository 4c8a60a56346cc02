package kafkaapi

import "github.com/prometheus/client_golang/prometheus"

// consumerMetrics are the consumer's collectors (S3.12).
type consumerMetrics struct {
	// records counts records by topic and result: applied, replayed (an
	// applied notification request whose trigger already existed: a
	// redelivery), retried (a failed try that is tried again),
	// dead_lettered.
	records *prometheus.CounterVec
	// lag is, per partition this member holds, how many records lie
	// between the next one to apply and the partition's end offset — the
	// fetch's high watermark, and the broker's end offset listed every
	// Config.LagInterval, so a partition that fetches nothing (stuck)
	// still shows its lag growing.
	lag *prometheus.GaugeVec
	// stuck is 1 while a partition waits on a record it can neither apply
	// nor dead-letter (issue 30 item 1), else 0.
	stuck *prometheus.GaugeVec
}

func newConsumerMetrics(reg prometheus.Registerer) (*consumerMetrics, error) {
	m := &consumerMetrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_kafka_records_total",
			Help: "Kafka records consumed, by topic and result (applied, replayed, retried, dead_lettered).",
		}, []string{"topic", "result"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_kafka_consumer_lag",
			Help: "Records between the next record to apply and the partition's end offset on the broker.",
		}, []string{"topic", "partition"}),
		stuck: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_kafka_partition_stuck",
			Help: "1 while a partition waits on a record that can be neither applied nor dead-lettered (the dead-letter topic or the database refuses it), else 0.",
		}, []string{"topic", "partition"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.records, m.lag, m.stuck} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
