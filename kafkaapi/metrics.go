package kafkaapi

import "github.com/prometheus/client_golang/prometheus"

// consumerMetrics are the consumer's collectors (S3.12).
type consumerMetrics struct {
	// records counts records by topic and result: applied, replayed (an
	// applied notification request whose trigger already existed: a
	// redelivery), retried (a failed try that is tried again),
	// dead_lettered.
	records *prometheus.CounterVec
	// lag is, per partition, how many records the last poll left behind
	// the partition's high watermark.
	lag *prometheus.GaugeVec
}

func newConsumerMetrics(reg prometheus.Registerer) (*consumerMetrics, error) {
	m := &consumerMetrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_kafka_records_total",
			Help: "Kafka records consumed, by topic and result (applied, replayed, retried, dead_lettered).",
		}, []string{"topic", "result"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_kafka_consumer_lag",
			Help: "Records between the consumer's position and the partition's high watermark, at the last poll.",
		}, []string{"topic", "partition"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.records, m.lag} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
