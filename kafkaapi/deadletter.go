package kafkaapi

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald"
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
	offset int64
	// record is for <topic>.dlq; nil (and produced) when the record is
	// kept in the database only (keepRenderFailure).
	record   *kgo.Record
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

// keepRenderFailure records an applied event whose rules could not render
// their message as a dead event (issue 31 item 1): the event is recorded
// and its offset is committed as any applied record's, and the dead
// event's replay renders those rules' failed runs again (herald.
// RecordRenderFailed). It is not written to the dead-letter topic — the
// event was applied, there is nothing to send it again for — but like a
// dead letter it is written before the offset commit, and a database that
// refuses it holds the partition on the record until it is kept.
func (c *Consumer) keepRenderFailure(ctx context.Context, r *kgo.Record, call *decoded, attempts int) settlement {
	dead := heraldtype.DeadEvent{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Kind: herald.RecordRenderFailed,
		Key: r.Key, Value: r.Value, RecordTimestamp: r.Timestamp, Payload: call.payload, Error: call.renderFailed.Error(),
		Attempts: attempts}
	return c.writeDeadLetter(ctx, r, &pendingDeadLetter{offset: r.Offset, dead: dead, produced: true, cause: call.renderFailed})
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
			"kind", p.dead.Kind, "attempts", p.dead.Attempts, "dead_letter_topic", p.deadLetterTopic(), "err", p.cause)
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

// deadLetterTopic names the dead-letter topic p is written to, "" for none.
func (p *pendingDeadLetter) deadLetterTopic() string {
	if p.record == nil {
		return ""
	}
	return p.record.Topic
}
