package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald"
	kafkaemu "github.com/heraldhq/herald/emulator/kafka"
	"github.com/heraldhq/herald/kafkaapi"
)

// KafkaConfig is the kafka: section, kafkaapi.Config's file and
// environment names (README: Events and notification requests over
// Kafka). Intake is off unless brokers are set or serve runs with --dev,
// which starts an in-process broker at dev.kafka_addr.
type KafkaConfig struct {
	// Brokers are the seed brokers (HERALD_KAFKA__BROKERS=a:9092,b:9092).
	Brokers []string `koanf:"brokers"`
	// Group is the consumer group every instance joins.
	Group string `koanf:"group"`
	// NotificationTopics carry notification requests (seed 003's
	// NotificationEvent as JSON), enqueued once per notificationId.
	NotificationTopics []string `koanf:"notification_topics"`
	// EventTopics carry business events, read as EventEncoding and
	// EventShape say; the topics the enabled rules name are read so too,
	// without being listed (RuleTopicPoll).
	EventTopics []string `koanf:"event_topics"`
	// InterestTopics are behaviour topics: interests (POST
	// /v1/interests' body as JSON).
	InterestTopics []string `koanf:"interest_topics"`
	// Retries and RetryDelay: a failing record is tried again this many
	// times, this far apart, then dead-lettered (S3.10).
	Retries    int           `koanf:"retries"`
	RetryDelay time.Duration `koanf:"retry_delay"`
	// DeadLetterSuffix names each topic's dead-letter topic.
	DeadLetterSuffix string `koanf:"dead_letter_suffix"`
	// MaxPollRecords bounds the records applied between offset commits.
	MaxPollRecords int `koanf:"max_poll_records"`
	// SessionTimeout: a silent member's partitions move after this.
	SessionTimeout time.Duration `koanf:"session_timeout"`
	// NotificationEncoding of the notification topics: json or avro
	// (issue 20 item 8).
	NotificationEncoding string `koanf:"notification_encoding"`
	// NotificationSchemaFile, with avro, is a fixed .avsc the values are
	// written with (raw Avro); empty: the Confluent wire format and
	// SchemaRegistryURL.
	NotificationSchemaFile string `koanf:"notification_schema_file"`
	// EventEncoding of the event topics: json or avro (issue 20 item 8).
	EventEncoding string `koanf:"event_encoding"`
	// EventSchemaFile, with avro, is a fixed .avsc the event values are
	// written with (raw Avro); empty: the registry's wire format.
	EventSchemaFile string `koanf:"event_schema_file"`
	// EventShape says how an event record becomes an event: event (POST
	// /v1/events' body; json only) or fields (any flat record mapped by
	// EventFields and EventSubject); empty: event for json, fields for
	// avro.
	EventShape string `koanf:"event_shape"`
	// EventSubject, with fields, is the subject template: {field}
	// placeholders over the record's fields ("-": no subject).
	EventSubject string `koanf:"event_subject"`
	// EventFields, with fields, names the record fields that give an
	// event its own ("-": the record has none).
	EventFields EventFieldsConfig `koanf:"event_fields"`
	// RuleTopicPoll is how often the rules' topics are looked up; 0: the
	// rules' topics are read only when listed in EventTopics.
	RuleTopicPoll time.Duration `koanf:"rule_topic_poll"`
	// SchemaRegistryURL is the schema registry (its REST API).
	SchemaRegistryURL string `koanf:"schema_registry_url"`
	// StuckAfter is how long a partition may wait on a record it can
	// neither apply nor dead-letter before /readyz fails naming it
	// (issue 30 item 1); 0: at once.
	StuckAfter time.Duration `koanf:"stuck_after"`
	// LagInterval is how often herald_kafka_consumer_lag is measured
	// against the brokers' end offsets; 0: only when records are fetched.
	LagInterval time.Duration `koanf:"lag_interval"`
}

// EventFieldsConfig is kafka.event_fields: kafkaapi.EventFields but the
// subject (kafka.event_subject).
type EventFieldsConfig struct {
	ID         string `koanf:"id"`
	Name       string `koanf:"name"`
	UserID     string `koanf:"user_id"`
	Version    string `koanf:"version"`
	OccurredAt string `koanf:"occurred_at"`
}

func defaultKafkaConfig() KafkaConfig {
	return KafkaConfig{Group: kafkaapi.DefaultGroup, NotificationTopics: []string{"notification.push.v1"},
		EventTopics: []string{"herald.events"}, InterestTopics: []string{"herald.interests"}, Retries: kafkaapi.DefaultRetries, RetryDelay: kafkaapi.DefaultRetryDelay,
		DeadLetterSuffix: kafkaapi.DefaultDeadLetterSuffix, MaxPollRecords: kafkaapi.DefaultMaxPollRecords,
		SessionTimeout: 45 * time.Second, NotificationEncoding: string(kafkaapi.EncodingJSON),
		EventEncoding: string(kafkaapi.EncodingJSON), EventSubject: kafkaapi.DefaultEventFields.Subject,
		EventFields: EventFieldsConfig{ID: kafkaapi.DefaultEventFields.ID, Name: kafkaapi.DefaultEventFields.Name,
			UserID: kafkaapi.DefaultEventFields.UserID, Version: kafkaapi.DefaultEventFields.Version,
			OccurredAt: kafkaapi.DefaultEventFields.OccurredAt},
		RuleTopicPoll: kafkaapi.DefaultRuleTopicPoll, StuckAfter: kafkaapi.DefaultStuckAfter, LagInterval: kafkaapi.DefaultLagInterval}
}

// topics lists the configured topics with their kinds and encodings, and
// how the rules' topics are read (as the event topics).
func (k KafkaConfig) topics() (ts []kafkaapi.Topic, ruleTopic kafkaapi.Topic, err error) {
	notificationSchema, err := schemaFile("kafka.notification_schema_file", k.NotificationSchemaFile)
	if err != nil {
		return nil, kafkaapi.Topic{}, err
	}
	eventSchema, err := schemaFile("kafka.event_schema_file", k.EventSchemaFile)
	if err != nil {
		return nil, kafkaapi.Topic{}, err
	}
	for _, n := range k.NotificationTopics {
		ts = append(ts, kafkaapi.Topic{Name: n, Kind: kafkaapi.KindNotifications,
			Encoding: kafkaapi.Encoding(k.NotificationEncoding), Schema: notificationSchema})
	}
	ruleTopic = kafkaapi.Topic{Kind: kafkaapi.KindEvents, Encoding: kafkaapi.Encoding(k.EventEncoding), Schema: eventSchema,
		Shape: kafkaapi.Shape(k.EventShape), Fields: kafkaapi.EventFields{ID: k.EventFields.ID, Name: k.EventFields.Name,
			UserID: k.EventFields.UserID, Subject: k.EventSubject, Version: k.EventFields.Version, OccurredAt: k.EventFields.OccurredAt}}
	for _, n := range k.EventTopics {
		t := ruleTopic
		t.Name = n
		ts = append(ts, t)
	}
	for _, n := range k.InterestTopics {
		ts = append(ts, kafkaapi.Topic{Name: n, Kind: kafkaapi.KindInterests})
	}
	return ts, ruleTopic, nil
}

// schemaFile reads the .avsc file named by the key, when one is.
func schemaFile(key, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return string(b), nil
}

// startKafka starts the Kafka intake when it is configured — and, with
// --dev and no brokers, the in-process broker it reads from (issue 20
// item 9). The returned stop ends the consumer (its last offsets
// committed) and then the broker; it is a no-op when intake is off, and
// the consumer (whose Ready the readiness probe asks) is nil then.
func startKafka(ctx context.Context, cfg Config, dev bool, client *herald.Client, reg prometheus.Registerer, log *slog.Logger) (func(), *kafkaapi.Consumer, error) {
	k := cfg.Kafka
	topics, ruleTopic, err := k.topics()
	if err != nil {
		return nil, nil, err
	}
	var closers []io.Closer
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i].Close()
		}
	}
	if len(k.Brokers) == 0 {
		if !dev {
			return func() {}, nil, nil
		}
		var names []string
		for _, t := range topics {
			names = append(names, t.Name, t.Name+k.DeadLetterSuffix)
		}
		b, err := kafkaemu.Start(kafkaemu.Config{Addr: cfg.Dev.KafkaAddr, Topics: names})
		if err != nil {
			return nil, nil, listenError("the Kafka broker", cfg.Dev.KafkaAddr, "dev.kafka_addr", "", err)
		}
		closers = append(closers, b)
		k.Brokers = []string{b.Addr()}
		attrs := []any{"emulator", "kafka", "brokers", b.Addr(), "notification_topics", k.NotificationTopics,
			"event_topics", k.EventTopics, "interest_topics", k.InterestTopics}
		if k.SchemaRegistryURL == "" {
			r, err := startDevRegistry(cfg.Dev.SchemaRegistryAddr, k.NotificationTopics, k.EventTopics)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			closers = append(closers, r)
			k.SchemaRegistryURL = r.URL()
			attrs = append(attrs, "schema_registry", r.URL())
		}
		log.Info("dev mode: Kafka broker started (in-process, Kafka protocol)", attrs...)
	}
	// kafkaapi's zero is the default; the file's zero is "off" (the
	// rules' topics not followed, the lag measured only at fetches) or
	// "at once" (stuck_after): kafkaapi's negative.
	rulePoll, stuckAfter, lagInterval := off(k.RuleTopicPoll), off(k.StuckAfter), off(k.LagInterval)
	cons, err := kafkaapi.New(kafkaapi.Config{
		Brokers: k.Brokers, Group: k.Group, Topics: topics, Retries: k.Retries, RetryDelay: k.RetryDelay,
		DeadLetterSuffix: k.DeadLetterSuffix, MaxPollRecords: k.MaxPollRecords, SessionTimeout: k.SessionTimeout,
		SchemaRegistryURL: k.SchemaRegistryURL, RuleTopic: ruleTopic, RuleTopicPoll: rulePoll,
		StuckAfter: stuckAfter, LagInterval: lagInterval,
		Registerer: reg, Logger: client.Logger(herald.ComponentKafka),
	}, client)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cons.Run(cctx); err != nil {
			log.Error("kafka: consumer stopped", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
		closeAll()
	}, cons, nil
}

// startDevRegistry starts serve --dev's schema registry with seed 003's
// schemas registered for the topics (the subject <topic>-value):
// NotificationEvent for each notification topic, ProductInventoryEvent
// for each event topic, so a producer using the registry's serializer
// finds them.
func startDevRegistry(addr string, notificationTopics, eventTopics []string) (*kafkaemu.Registry, error) {
	r, err := kafkaemu.StartRegistry(addr)
	if err != nil {
		return nil, listenError("the schema registry", addr, "dev.schema_registry_addr", "", err)
	}
	for schema, topics := range map[string][]string{"NotificationEvent": notificationTopics, "ProductInventoryEvent": eventTopics} {
		text, err := kafkaapi.Schemas.ReadFile("schemas/" + schema + ".avsc")
		if err != nil {
			r.Close()
			return nil, err
		}
		for _, t := range topics {
			if _, err := r.RegisterAvro(t+"-value", string(text)); err != nil {
				r.Close()
				return nil, fmt.Errorf("dev: schema registry: %w", err)
			}
		}
	}
	return r, nil
}

func newEmulateKafkaCmd(e *env) *cobra.Command {
	var addr string
	var topics []string
	var partitions int32
	cmd := &cobra.Command{
		Use:   "kafka",
		Short: "Run an in-process Kafka-protocol broker (franz-go's kfake) for local tests",
		Long: `Run a Kafka-protocol broker in this process (franz-go's kfake): produce, fetch,
consumer groups and offset commits as a Kafka cluster answers them, everything in memory.
Point kafka.brokers (HERALD_KAFKA__BROKERS) and your own producers at it. Topics named
with --topic are created at start; others on first use, with --partitions each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			b, err := kafkaemu.Start(kafkaemu.Config{Addr: addr, Topics: topics, Partitions: partitions})
			if err != nil {
				return err
			}
			log.Info("kafka emulator listening", "brokers", b.Addr(), "topics", topics, "partitions", partitions)
			return runUntilDone(cmd, b)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:9092", "listen address")
	cmd.Flags().StringSliceVar(&topics, "topic", nil, "a topic to create at start (repeatable)")
	cmd.Flags().Int32Var(&partitions, "partitions", kafkaemu.DefaultPartitions, "partitions per topic")
	return cmd
}
