package kafkaapi

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// health is what the consumer knows of the partitions it holds: the next
// record each is to apply, and those whose intake is stuck (issue 30 item
// 1). A partition is stuck while a record of it can be neither applied nor
// dead-lettered — the dead-letter topic or the database refuses it — so
// its offset cannot move. The consumer keeps trying (a record is never
// skipped unrecorded) while its other partitions go on, and says so: in
// the readiness probe (Ready), in herald_kafka_partition_stuck, and in
// the lag, measured against the broker's end offsets rather than against
// what was fetched.
type health struct {
	mu    sync.Mutex
	next  map[topicPartition]int64
	stuck map[topicPartition]stuckRecord
	// lag is each held partition's last measured lag, what the gauge
	// shows, for Lag (the console's overview).
	lag map[topicPartition]int64
}

type topicPartition struct {
	topic     string
	partition int32
}

// stuckRecord is the record a stuck partition waits on.
type stuckRecord struct {
	offset  int64
	since   time.Time
	pending *pendingDeadLetter
}

func newHealth() *health {
	return &health{next: map[topicPartition]int64{}, stuck: map[topicPartition]stuckRecord{}, lag: map[topicPartition]int64{}}
}

func (c *Consumer) partitionLabels(tp topicPartition) []string {
	return []string{tp.topic, strconv.Itoa(int(tp.partition))}
}

// advance records that offset is the next record of tp to apply, and the
// lag behind end, the partition's end offset (the fetch's high watermark).
func (c *Consumer) advance(tp topicPartition, offset, end int64) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	c.health.next[tp] = offset
	c.health.lag[tp] = max(end-offset, 0)
	c.metrics.lag.WithLabelValues(c.partitionLabels(tp)...).Set(float64(max(end-offset, 0)))
}

// stick marks tp stuck on p's record from since (kept from the first
// failure), with p to try again when the record comes back.
func (c *Consumer) stick(tp topicPartition, p *pendingDeadLetter, since time.Time) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if s, ok := c.health.stuck[tp]; ok && s.offset == p.offset {
		since = s.since
	}
	c.health.stuck[tp] = stuckRecord{offset: p.offset, since: since, pending: p}
	c.metrics.stuck.WithLabelValues(c.partitionLabels(tp)...).Set(1)
}

// unstick clears tp's stuck state, if it had one.
func (c *Consumer) unstick(tp topicPartition) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if _, ok := c.health.stuck[tp]; ok {
		delete(c.health.stuck, tp)
		c.metrics.stuck.WithLabelValues(c.partitionLabels(tp)...).Set(0)
	}
}

// pendingFor is the dead letter r's partition is stuck on, when r is its
// record; nil otherwise.
func (c *Consumer) pendingFor(r *kgo.Record) *pendingDeadLetter {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if s, ok := c.health.stuck[topicPartition{r.Topic, r.Partition}]; ok && s.offset == r.Offset {
		return s.pending
	}
	return nil
}

// holdBack rewinds each partition stuck in this poll to the record it is
// stuck on and pauses it for RetryDelay, so the poll loop goes on with
// the other partitions and the record comes back to be tried again. It
// runs on the poll loop before AllowRebalance, as kgo's SetOffsets asks.
func (c *Consumer) holdBack(records []*kgo.Record) {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	pause := map[string][]int32{}
	resume := time.Now().Add(c.cfg.RetryDelay)
	for _, r := range records {
		if offsets[r.Topic] == nil {
			offsets[r.Topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[r.Topic][r.Partition] = kgo.EpochOffset{Epoch: -1, Offset: r.Offset}
		pause[r.Topic] = append(pause[r.Topic], r.Partition)
		c.paused[topicPartition{r.Topic, r.Partition}] = resume
	}
	c.kafka.PauseFetchPartitions(pause)
	c.kafka.SetOffsets(offsets)
}

// resumeDue resumes the held-back partitions whose pause is over, and
// returns how long until the next one is (0: none is paused).
func (c *Consumer) resumeDue() time.Duration {
	now := time.Now()
	resume := map[string][]int32{}
	var next time.Duration
	for tp, at := range c.paused {
		if wait := at.Sub(now); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		resume[tp.topic] = append(resume[tp.topic], tp.partition)
		delete(c.paused, tp)
	}
	if len(resume) > 0 {
		c.kafka.ResumeFetchPartitions(resume)
	}
	return next
}

// forget drops what is known of partitions this member no longer holds
// (revoked or lost in a rebalance): another member reports them now.
func (c *Consumer) forget(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	for topic, ps := range lost {
		for _, p := range ps {
			tp := topicPartition{topic, p}
			delete(c.health.next, tp)
			delete(c.health.stuck, tp)
			delete(c.health.lag, tp)
			c.metrics.lag.DeleteLabelValues(c.partitionLabels(tp)...)
			c.metrics.stuck.DeleteLabelValues(c.partitionLabels(tp)...)
		}
	}
}

// Lag is how many records this member is behind on the partitions it
// holds, summed — herald_kafka_consumer_lag's sum — and false while it
// holds none (before its first fetch, or after losing them all).
func (c *Consumer) Lag() (int64, bool) {
	c.health.mu.Lock()
	defer c.health.mu.Unlock()
	if len(c.health.lag) == 0 {
		return 0, false
	}
	var n int64
	for _, l := range c.health.lag {
		n += l
	}
	return n, true
}

// Ready reports whether the intake moves: an error names each partition
// that has been stuck for Config.StuckAfter or longer — its topic,
// partition and the offset it waits on — and nil otherwise. The text
// holds no internals (the log has the cause): the readiness probe shows
// it to whoever asks.
func (c *Consumer) Ready(context.Context) error {
	now := time.Now()
	c.health.mu.Lock()
	var stuck []string
	for tp, s := range c.health.stuck {
		if now.Sub(s.since) >= c.cfg.StuckAfter {
			stuck = append(stuck, fmt.Sprintf("topic %s partition %d at offset %d since %s",
				tp.topic, tp.partition, s.offset, s.since.UTC().Format(time.RFC3339)))
		}
	}
	c.health.mu.Unlock()
	if len(stuck) == 0 {
		return nil
	}
	sort.Strings(stuck)
	return fmt.Errorf("Kafka intake is stuck: a record can be neither applied nor dead-lettered on %s", strings.Join(stuck, "; "))
}

// measureLag sets the lag of every partition this member holds against
// the broker's end offsets, every Config.LagInterval until ctx ends: a
// stuck partition fetches nothing, and its lag must still grow with what
// is produced behind it.
func (c *Consumer) measureLag(ctx context.Context) {
	adm := kadm.NewClient(c.kafka)
	tick := time.NewTicker(c.cfg.LagInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.health.mu.Lock()
		topics := map[string]bool{}
		for tp := range c.health.next {
			topics[tp.topic] = true
		}
		c.health.mu.Unlock()
		if len(topics) == 0 {
			continue
		}
		names := make([]string, 0, len(topics))
		for t := range topics {
			names = append(names, t)
		}
		lctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
		ends, err := adm.ListEndOffsets(lctx, names...)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("kafka: cannot list the end offsets to measure the lag", "err", err)
			}
			continue
		}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil || o.Offset < 0 {
				return
			}
			tp := topicPartition{o.Topic, o.Partition}
			c.health.mu.Lock()
			defer c.health.mu.Unlock()
			if at, held := c.health.next[tp]; held {
				c.health.lag[tp] = max(o.Offset-at, 0)
				c.metrics.lag.WithLabelValues(c.partitionLabels(tp)...).Set(float64(max(o.Offset-at, 0)))
			}
		})
	}
}
