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

// settlement is what handling a record came to.
type settlement int

const (
	// settled: applied or dead-lettered; its offset may be committed.
	settled settlement = iota
	// interrupted: the consumer is stopping; the record comes back.
	interrupted
	// stuck: it can be neither applied nor dead-lettered yet (the
	// dead-letter topic or the database refuses it). Its partition is
	// held back at it (holdBack) and tried again after RetryDelay; the
	// other partitions go on (issue 30 item 1).
	stuck
)

// pendingDeadLetter is a dead letter that could not be written yet: when
// its record comes back (holdBack rewinds its partition to it), writing
// it is tried again at once — the record is not decoded and retried
// again — and the dead-letter topic is not written twice.
type pendingDeadLetter struct {
	offset   int64
	record   *kgo.Record // for <topic>.dlq
	dead     heraldtype.DeadEvent
	produced bool
	// cause is why the record is dead-lettered, for the log.
	cause error
}

// deadLetter writes r to its topic's dead-letter topic with the headers
// that say where it came from and why (S3.10), and records it in the
// database.
func (c *Consumer) deadLetter(ctx context.Context, r *kgo.Record, payload []byte, cause error, attempts int) settlement {
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
	return c.writeDeadLetter(ctx, r, &pendingDeadLetter{offset: r.Offset, record: dl, dead: dead, cause: cause})
}

// writeDeadLetter tries once to write p: the dead-letter topic first,
// then the database (GET /v1/events/dead, replay), both before the offset
// commit. Done again after a crash, the topic may get a second copy and
// the database keeps the first (the same record: store.DeadEventFingerprint).
// A failure leaves p pending and the partition stuck on r.
func (c *Consumer) writeDeadLetter(ctx context.Context, r *kgo.Record, p *pendingDeadLetter) settlement {
	tp := topicPartition{r.Topic, r.Partition}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	var err error
	if !p.produced {
		if err = c.kafka.ProduceSync(pctx, p.record).FirstErr(); err == nil {
			p.produced = true
		}
	}
	if err == nil {
		_, err = c.client.RecordDeadEvent(pctx, p.dead)
	}
	cancel()
	if err == nil {
		c.unstick(tp)
		c.metrics.records.WithLabelValues(r.Topic, "dead_lettered").Inc()
		c.log.Warn("kafka: record dead-lettered", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset,
			"attempts", p.dead.Attempts, "dead_letter_topic", p.record.Topic, "err", p.cause)
		return settled
	}
	if ctx.Err() != nil {
		return interrupted
	}
	c.stick(tp, p, time.Now())
	c.log.Error("kafka: cannot dead-letter a record; its partition waits and tries again", "topic", r.Topic,
		"partition", r.Partition, "offset", r.Offset, "dead_letter_produced", p.produced, "retry_in", c.cfg.RetryDelay, "err", err)
	return stuck
}
