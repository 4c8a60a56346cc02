package kafkaapi

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald/heraldtype"
)

// permanent says a retry cannot help: the record does not decode, or
// Herald refuses its content (bad input, an idempotency key already taken
// by other content). Other failures — the database, a user not yet
// registered — are retried first.
func permanent(err error) bool {
	var de *decodeError
	if errors.As(err, &de) {
		return true
	}
	switch heraldtype.ErrorCode(err) {
	case heraldtype.EINVALID, heraldtype.ECONFLICT:
		return true
	}
	return false
}

// deadLetter writes r to its topic's dead-letter topic with the headers
// that say where it came from and why (S3.10). It retries the produce
// until it succeeds or ctx ends (then false: the record is not settled).
func (c *Consumer) deadLetter(ctx context.Context, r *kgo.Record, payload []byte, cause error, attempts int) bool {
	dl := &kgo.Record{
		Topic: r.Topic + c.cfg.DeadLetterSuffix,
		Key:   r.Key,
		Value: r.Value,
		Headers: append(append([]kgo.RecordHeader(nil), r.Headers...),
			kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
			kgo.RecordHeader{Key: HeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
			kgo.RecordHeader{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
			kgo.RecordHeader{Key: HeaderError, Value: []byte(cause.Error())},
			kgo.RecordHeader{Key: HeaderAttempts, Value: []byte(strconv.Itoa(attempts))},
		),
	}
	dead := heraldtype.DeadEvent{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Kind: string(c.reader(r.Topic).kind),
		Key: r.Key, Value: r.Value, Tombstone: r.Value == nil, RecordTimestamp: r.Timestamp,
		Payload: payload, Error: cause.Error(), Attempts: attempts}
	produced, stuck := false, false
	for {
		// The dead-letter topic first, then the record in the database
		// (GET /v1/events/dead, replay); both before the offset commit.
		// Done again after a crash, the topic may get a second copy and
		// the database keeps the first (one row per topic, partition and
		// offset).
		pctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
		var err error
		if !produced {
			if err = c.kafka.ProduceSync(pctx, dl).FirstErr(); err == nil {
				produced = true
			}
		}
		if err == nil {
			_, err = c.client.RecordDeadEvent(pctx, dead)
		}
		cancel()
		if err == nil {
			if stuck {
				c.setStuck(r, false, time.Time{})
			}
			c.metrics.records.WithLabelValues(r.Topic, "dead_lettered").Inc()
			c.log.Warn("kafka: record dead-lettered", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset,
				"attempts", attempts, "dead_letter_topic", dl.Topic, "err", cause)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if !stuck {
			stuck = true
			c.setStuck(r, true, time.Now())
		}
		c.log.Error("kafka: cannot dead-letter a record; the partition waits", "topic", r.Topic, "partition", r.Partition,
			"offset", r.Offset, "dead_letter_produced", produced, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(c.cfg.RetryDelay):
		}
	}
}
