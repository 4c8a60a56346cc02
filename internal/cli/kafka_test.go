package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/kafkaapi"
)

// Issue 20 item 8: the event topics' keys — encoding, schema file, shape,
// subject template, field names, the rules' topic poll — reach each event
// topic and the rules' topics alike; the defaults keep JSON and follow the
// rules every 10 s; 0 stops following them.
func TestKafkaEventTopicConfig(t *testing.T) {
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Kafka
	ts, rule, err := k.topics()
	if err != nil {
		t.Fatal(err)
	}
	if k.RuleTopicPoll != 10*time.Second || rule.Encoding != kafkaapi.EncodingJSON || rule.Shape != "" ||
		rule.Fields != kafkaapi.DefaultEventFields {
		t.Fatalf("defaults: poll %v, rule topic %+v", k.RuleTopicPoll, rule)
	}
	if len(ts) != 3 {
		t.Fatalf("default topics: %+v", ts)
	}

	schema := filepath.Join(t.TempDir(), "p.avsc")
	b, err := kafkaapi.Schemas.ReadFile("schemas/ProductInventoryEvent.avsc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schema, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = loadConfig("", []string{"HERALD_KAFKA__EVENT_ENCODING=avro", "HERALD_KAFKA__EVENT_SCHEMA_FILE=" + schema,
		"HERALD_KAFKA__EVENT_SHAPE=fields", "HERALD_KAFKA__EVENT_SUBJECT=sku:{sku}", "HERALD_KAFKA__EVENT_FIELDS__ID=-",
		"HERALD_KAFKA__EVENT_FIELDS__NAME=kind", "HERALD_KAFKA__RULE_TOPIC_POLL=0", "HERALD_KAFKA__EVENT_TOPICS=a,b"})
	if err != nil {
		t.Fatal(err)
	}
	ts, rule, err = cfg.Kafka.topics()
	if err != nil {
		t.Fatal(err)
	}
	want := kafkaapi.Topic{Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro, Schema: string(b), Shape: kafkaapi.ShapeFields,
		Fields: kafkaapi.EventFields{ID: "-", Name: "kind", UserID: "userId", Subject: "sku:{sku}", Version: "timestamp", OccurredAt: "timestamp"}}
	if rule != want || cfg.Kafka.RuleTopicPoll != 0 {
		t.Fatalf("rule topic %+v, poll %v", rule, cfg.Kafka.RuleTopicPoll)
	}
	var events []string
	for _, tp := range ts {
		if tp.Kind == kafkaapi.KindEvents {
			if tp.Name == "" || tp.Schema != string(b) || tp.Fields != want.Fields {
				t.Fatalf("event topic %+v", tp)
			}
			events = append(events, tp.Name)
		}
	}
	if len(events) != 2 {
		t.Fatalf("event topics %v", events)
	}
	cfg.Kafka.EventSchemaFile = filepath.Join(t.TempDir(), "missing.avsc")
	if _, _, err := cfg.Kafka.topics(); err == nil || !strings.Contains(err.Error(), "kafka.event_schema_file") {
		t.Fatalf("a missing event schema file: %v", err)
	}
}

// Issue 30 item 1: kafka.stuck_after and kafka.lag_interval default to
// kafkaapi's defaults and are read from the environment.
func TestKafkaHealthConfig(t *testing.T) {
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Kafka.StuckAfter != kafkaapi.DefaultStuckAfter || cfg.Kafka.LagInterval != kafkaapi.DefaultLagInterval {
		t.Fatalf("defaults: stuck_after %v, lag_interval %v", cfg.Kafka.StuckAfter, cfg.Kafka.LagInterval)
	}
	cfg, err = loadConfig("", []string{"HERALD_KAFKA__STUCK_AFTER=2m", "HERALD_KAFKA__LAG_INTERVAL=0"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Kafka.StuckAfter != 2*time.Minute || cfg.Kafka.LagInterval != 0 || off(cfg.Kafka.LagInterval) >= 0 {
		t.Fatalf("from the environment: stuck_after %v, lag_interval %v", cfg.Kafka.StuckAfter, cfg.Kafka.LagInterval)
	}
}
