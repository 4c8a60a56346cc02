// Package kafkaapi is Herald's Kafka transport (issue 20, S3.1, S3.10): a
// franz-go consumer group that reads event topics (the configured ones and
// those the rules name), notification-request topics and interest topics,
// JSON or Avro, and calls the public herald.Client, as httpapi does for
// HTTP. It holds no SQL, no store and no provider code.
//
// Exactly once in effect: a record's work is one Client call whose
// database transaction also records the record's identity — a
// notification request's trigger is idempotent under its notificationId
// (or topic:partition:offset when it has none) — and the partition's
// offset is committed only after that call returned. A crash or a
// rebalance between the two re-delivers the record, and the repeated call
// writes nothing new.
//
// Order: the records of one partition are applied one after another (a
// product's events share a key, hence a partition); partitions run
// concurrently. A record that keeps failing is retried (Config.Retries,
// Config.RetryDelay: the seed's FixedBackOff(1 s, 3)), then written to the
// topic's dead-letter topic (<topic>.dlq) with headers naming where it came
// from and why, so a poison message never blocks its partition.
package kafkaapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Client is what the consumer calls: the public herald.Client.
type Client interface {
	Enqueue(ctx context.Context, r herald.Request) (herald.Result, error)
	Track(ctx context.Context, e herald.Event) (herald.TrackResult, error)
	RecordInterests(ctx context.Context, in []herald.InterestInput) (int, error)
	RecordDeadEvent(ctx context.Context, d heraldtype.DeadEvent) (int64, error)
	// RuleTopics lists the Kafka topics enabled rules take their events
	// from (a rule's source.kafka_topic): the consumer reads each as an
	// event topic without being configured to.
	RuleTopics(ctx context.Context) ([]string, error)
}

var _ Client = (*herald.Client)(nil)

// Config configures a Consumer. Brokers and Topics are required.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Group is the consumer group; every Herald instance of a deployment
	// joins it and they share the partitions. Default "herald".
	Group  string
	Topics []Topic
	// Retries is how many times a failing record is tried again before
	// it is dead-lettered (S3.10). Default 3; negative: none.
	Retries int
	// RetryDelay is the pause between two tries. Default 1 s.
	RetryDelay time.Duration
	// DeadLetterSuffix names a topic's dead-letter topic. Default ".dlq".
	DeadLetterSuffix string
	// MaxPollRecords bounds the records one poll takes, hence how much is
	// applied between two offset commits. Default 500.
	MaxPollRecords int
	// CallTimeout bounds one Client call. Default 10 s.
	CallTimeout time.Duration
	// SessionTimeout is how long the group waits for a silent member (a
	// killed instance) before its partitions move to the others. Default
	// Kafka's 45 s.
	SessionTimeout time.Duration
	// SchemaRegistryURL is the schema registry the Confluent wire format
	// is decoded with (its REST API); required by an Avro topic without
	// a fixed Schema.
	SchemaRegistryURL string
	// RuleTopic says how the topics the rules name are read (Client.
	// RuleTopics): its Encoding, Schema, Shape and Fields, as an event
	// topic's. Its Name and Kind are not used: the rules name the
	// topics, and they carry events. A topic listed in Topics keeps its
	// own settings.
	RuleTopic Topic
	// RuleTopicPoll is how often the rules' topics are listed; a topic a
	// new rule names is consumed from then on (from its start, when the
	// group has no offset for it yet) until the consumer stops. Default
	// 10 s; negative: the rules' topics are not followed.
	RuleTopicPoll time.Duration
	// StuckAfter is how long a partition may wait on a record it can
	// neither apply nor dead-letter before Ready fails, naming it. The
	// metric herald_kafka_partition_stuck says so at once. Default 30 s;
	// negative: Ready fails at once too.
	StuckAfter time.Duration
	// LagInterval is how often the lag (herald_kafka_consumer_lag) is
	// measured against the broker's end offsets, beside each fetch's high
	// watermark. Default 15 s; negative: only at fetches.
	LagInterval time.Duration
	// Options are extra franz-go client options (TLS, SASL; tests' group
	// timeouts), applied after Herald's own.
	Options []kgo.Opt
	// Registerer receives the consumer's collectors; nil: none.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Defaults of Config.
const (
	DefaultGroup            = "herald"
	DefaultRetries          = 3
	DefaultRetryDelay       = time.Second
	DefaultDeadLetterSuffix = ".dlq"
	DefaultMaxPollRecords   = 500
	DefaultCallTimeout      = 10 * time.Second
	DefaultRuleTopicPoll    = 10 * time.Second
	DefaultStuckAfter       = 30 * time.Second
	DefaultLagInterval      = 15 * time.Second
)

// Headers of a dead-lettered record (S3.10).
const (
	HeaderTopic     = "herald.original.topic"
	HeaderPartition = "herald.original.partition"
	HeaderOffset    = "herald.original.offset"
	HeaderError     = "herald.error"
	HeaderAttempts  = "herald.attempts"
)

// Consumer reads the configured topics as a member of the consumer group.
type Consumer struct {
	cfg    Config
	client Client
	// mu guards readers: the rule-topic poller adds to it while the
	// partitions' goroutines read it.
	mu      sync.RWMutex
	readers map[string]*topicReader
	// ruleReader reads every topic a rule names (Config.RuleTopic).
	ruleReader *topicReader
	kafka      *kgo.Client
	metrics    *consumerMetrics
	health     *health
	// paused are the partitions held back on a stuck record, with when
	// to resume them; only the poll loop touches it.
	paused map[topicPartition]time.Time
	// tracer records a span per record; nil when the Client does not
	// trace (tracing.go).
	tracer trace.Tracer
	log    *slog.Logger
}

// New checks cfg and connects the consumer's Kafka client (lazily: the
// brokers are first contacted by Run).
func New(cfg Config, client Client) (*Consumer, error) {
	if client == nil {
		return nil, errors.New("kafkaapi: a Client is required")
	}
	if len(cfg.Brokers) == 0 {
		return nil, heraldtype.FieldErrorf("kafka.brokers", "at least one broker is required")
	}
	if len(cfg.Topics) == 0 {
		return nil, heraldtype.FieldErrorf("kafka.topics", "at least one topic is required")
	}
	if cfg.Group == "" {
		cfg.Group = DefaultGroup
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.DeadLetterSuffix == "" {
		cfg.DeadLetterSuffix = DefaultDeadLetterSuffix
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = DefaultMaxPollRecords
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RuleTopicPoll == 0 {
		cfg.RuleTopicPoll = DefaultRuleTopicPoll
	}
	if cfg.StuckAfter == 0 {
		cfg.StuckAfter = DefaultStuckAfter
	} else if cfg.StuckAfter < 0 {
		cfg.StuckAfter = 0
	}
	if cfg.LagInterval == 0 {
		cfg.LagInterval = DefaultLagInterval
	}
	build := &readers{registryURL: cfg.SchemaRegistryURL}
	rds := make(map[string]*topicReader, len(cfg.Topics))
	names := make([]string, 0, len(cfg.Topics))
	for i, t := range cfg.Topics {
		field := fmt.Sprintf("kafka.topics[%d]", i)
		if t.Name == "" {
			return nil, heraldtype.FieldErrorf(field+".name", "is required")
		}
		if _, dup := rds[t.Name]; dup {
			return nil, heraldtype.FieldErrorf(field+".name", "topic %q is listed twice", t.Name)
		}
		rd, err := build.reader(field, fmt.Sprintf("the topic %q", t.Name), t)
		if err != nil {
			return nil, err
		}
		rds[t.Name] = rd
		names = append(names, t.Name)
	}
	var ruleReader *topicReader
	if cfg.RuleTopicPoll > 0 {
		rt := cfg.RuleTopic
		rt.Kind = KindEvents
		var err error
		if ruleReader, err = build.reader("kafka.rule_topic", "the rules' topics", rt); err != nil {
			return nil, err
		}
	}
	c := &Consumer{cfg: cfg, client: client, readers: rds, ruleReader: ruleReader, health: newHealth(),
		paused: map[topicPartition]time.Time{}, log: cfg.Logger, tracer: recordTracer(client)}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(names...),
		// Offsets are committed by hand, after the records' work
		// committed in the database, and a rebalance waits for that
		// commit: a partition changes hands only between two polls.
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// A new group starts at the beginning: events produced before
		// Herald first joined are not skipped.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// The dead-letter topics are created on first use.
		kgo.AllowAutoTopicCreation(),
		// A partition that moves to another member is reported there.
		kgo.OnPartitionsRevoked(c.forget),
		kgo.OnPartitionsLost(c.forget),
	}, cfg.Options...)
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	kc, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafkaapi: %w", err)
	}
	if c.metrics, err = newConsumerMetrics(cfg.Registerer); err != nil {
		kc.Close()
		return nil, err
	}
	c.kafka = kc
	return c, nil
}

// Run consumes until ctx ends, then commits what it applied, leaves the
// group and closes the Kafka client. It returns nil on a clean stop.
func (c *Consumer) Run(ctx context.Context) error {
	defer c.kafka.Close() // leaves the group
	c.log.Info("kafka: consuming", "brokers", c.cfg.Brokers, "group", c.cfg.Group, "topics", c.topicNames())
	if c.ruleReader != nil {
		// Deferred after Close, so it runs first: the poller is done
		// before the client closes.
		pctx, cancel := context.WithCancel(ctx)
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			c.followRuleTopics(pctx)
		}()
		defer func() {
			cancel()
			<-polled
		}()
	}
	if c.cfg.LagInterval > 0 {
		lctx, cancel := context.WithCancel(ctx)
		measured := make(chan struct{})
		go func() {
			defer close(measured)
			c.measureLag(lctx)
		}()
		defer func() {
			cancel()
			<-measured
		}()
	}
	for {
		// A poll waits for records; while a partition is held back it
		// waits no longer than until that partition's retry is due.
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if wait := c.resumeDue(); wait > 0 {
			pctx, cancel = context.WithTimeout(ctx, wait)
		}
		fetches := c.kafka.PollRecords(pctx, c.cfg.MaxPollRecords)
		cancel()
		if fetches.IsClientClosed() || ctx.Err() != nil {
			c.kafka.AllowRebalance()
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				c.log.Warn("kafka: fetch failed", "topic", topic, "partition", partition, "err", err)
			}
		})
		done, held := c.apply(ctx, fetches)
		if len(done) > 0 {
			// Commit only what was applied; bounded, so a broker that does
			// not answer cannot hold the loop forever. A failed commit is
			// not fatal: the records come back and replay idempotently.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.CallTimeout)
			if err := c.kafka.CommitRecords(cctx, done...); err != nil {
				c.log.Warn("kafka: offset commit failed; the records will be applied again (idempotently)", "err", err)
			}
			cancel()
		}
		if len(held) > 0 {
			c.holdBack(held)
		}
		c.kafka.AllowRebalance()
	}
}

// apply applies a poll's records, each partition in order and the
// partitions concurrently, and returns the last settled record of each
// partition (what to commit) and the record each stuck partition stopped
// at (what to hold back). A partition interrupted by ctx returns what it
// finished.
func (c *Consumer) apply(ctx context.Context, fetches kgo.Fetches) (done, held []*kgo.Record) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		tp := topicPartition{p.Topic, p.Partition}
		c.advance(tp, p.Records[0].Offset, p.HighWatermark)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var applied, stuckAt *kgo.Record
		records:
			for _, r := range p.Records {
				switch c.handle(ctx, r) {
				case settled:
					applied = r
					c.advance(tp, r.Offset+1, p.HighWatermark)
				case stuck:
					stuckAt = r
					break records
				default:
					break records
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if applied != nil {
				done = append(done, applied)
			}
			if stuckAt != nil {
				held = append(held, stuckAt)
			}
		}()
	})
	wg.Wait()
	return done, held
}

// handle applies one record, retrying and then dead-lettering it. Only
// a settled record may be committed.
func (c *Consumer) handle(ctx context.Context, r *kgo.Record) (s settlement) {
	if c.tracer != nil {
		var span trace.Span
		ctx, span = c.startRecord(ctx, r)
		defer func() { endRecord(span, s) }()
	}
	if p := c.pendingFor(r); p != nil {
		// Back after its partition was held: only its dead letter is
		// left to write.
		return c.writeDeadLetter(ctx, r, p)
	}
	call, err := c.decode(ctx, r)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return interrupted
	case permanent(err):
		return c.deadLetter(ctx, r, nil, err, 1)
	default:
		// The decoder could not reach what it needs (the schema
		// registry): the record is tried again like a failed call.
		retry := &decoded{}
		retry.apply = func(ctx context.Context) error {
			again, err := c.decode(ctx, r)
			if err != nil {
				return err
			}
			err = again.apply(ctx)
			retry.payload, retry.renderFailed = again.payload, again.renderFailed
			return err
		}
		call = retry
	}
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
		err := call.apply(cctx)
		cancel()
		if err == nil {
			c.metrics.records.WithLabelValues(r.Topic, "applied").Inc()
			if c.log.Enabled(ctx, slog.LevelDebug) { // log.debug: [kafka]
				c.log.Debug("kafka: record applied", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "attempt", attempt)
			}
			if call.renderFailed != nil {
				return c.keepRenderFailure(ctx, r, call, attempt)
			}
			return settled
		}
		if ctx.Err() != nil {
			return interrupted
		}
		if permanent(err) || attempt > c.cfg.Retries {
			return c.deadLetter(ctx, r, call.payload, err, attempt)
		}
		c.metrics.records.WithLabelValues(r.Topic, "retried").Inc()
		c.log.Warn("kafka: record failed; retrying", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset,
			"attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return interrupted
		case <-time.After(c.cfg.RetryDelay):
		}
	}
}

// decoded is a decoded record: the one Client call it makes, and that
// call's input as JSON (kept with a dead letter, for a replay).
type decoded struct {
	apply   func(ctx context.Context) error
	payload []byte
	// renderFailed is, once an event's Track returned, the error of its
	// rules whose message could not be rendered (nil: none).
	renderFailed error
}

// decode decodes a record into its Client call. A record without a value
// (a tombstone) or with an empty one is a decode error like any other
// bytes that are not a record of the topic: dead-lettered, never a
// partition that waits (issue 30 item 1). A decoder that panics on some
// bytes makes a decode error too, not a crash of the intake.
func (c *Consumer) decode(ctx context.Context, r *kgo.Record) (d *decoded, err error) {
	switch {
	case r.Value == nil:
		return nil, &decodeError{errors.New("the record has no value (a tombstone): there is nothing to apply")}
	case len(r.Value) == 0:
		return nil, &decodeError{errors.New("the record's value is empty")}
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, &decodeError{fmt.Errorf("the record cannot be decoded (%v)", p)}
		}
	}()
	var in any
	var apply func(ctx context.Context) error
	call := &decoded{}
	rd := c.reader(r.Topic)
	switch rd.kind {
	case KindNotifications:
		req, err := decodeNotificationRequest(ctx, rd.dec, r)
		if err != nil {
			return nil, err
		}
		in = req
		apply = func(ctx context.Context) error {
			res, err := c.client.Enqueue(ctx, req)
			if err == nil && res.Replayed {
				c.metrics.records.WithLabelValues(r.Topic, "replayed").Inc()
			}
			return err
		}
	case KindInterests:
		var it herald.InterestInput
		if err := strictJSON(r.Value, &it, "at"); err != nil {
			return nil, &decodeError{err}
		}
		in = it
		apply = func(ctx context.Context) error {
			_, err := c.client.RecordInterests(ctx, []herald.InterestInput{it})
			return err
		}
	default:
		e, err := rd.event(ctx, r)
		if err != nil {
			return nil, err
		}
		in = e
		apply = func(ctx context.Context) error {
			res, err := c.client.Track(ctx, e)
			if err == nil {
				call.renderFailed = res.RenderFailures()
			}
			return err
		}
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return nil, &decodeError{err}
	}
	call.apply, call.payload = apply, payload
	return call, nil
}

// reader is how topic is read. Every topic the client consumes has one:
// a rule's topic gets its reader before it is added to the consumption.
func (c *Consumer) reader(topic string) *topicReader {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.readers[topic]
}

func (c *Consumer) topicNames() []string {
	names := make([]string, 0, len(c.cfg.Topics))
	for _, t := range c.cfg.Topics {
		names = append(names, t.Name)
	}
	return names
}
