package kafkaapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/heraldhq/herald"
	kafkaemu "github.com/heraldhq/herald/emulator/kafka"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
	"github.com/heraldhq/herald/store/sqlite"
)

const requests = "notification.push.v1"

// fixture is a kfake broker, a Herald client on a temp SQLite store and
// a producer.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	broker *kafkaemu.Broker
	client *herald.Client
	prod   *kgo.Client
}

func newFixture(t *testing.T, opts ...kfake.Opt) *fixture {
	t.Helper()
	ctx := t.Context()
	b, err := kafkaemu.Start(kafkaemu.Config{Topics: []string{requests, "events.v1", "interests.v1"}, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := herald.NewClient(herald.Config{Store: s, DisableWorkers: true, MaintenanceInterval: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic(requests), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &fixture{t: t, ctx: ctx, broker: b, client: c, prod: prod}
}

func (f *fixture) users(n int) {
	for i := range n {
		if _, err := f.client.PutUser(f.ctx, user(i), herald.UserInput{}); err != nil {
			f.t.Fatal(err)
		}
	}
}

func user(i int) string { return fmt.Sprintf("u%03d", i) }

// produce writes records, keyed by user (one user's requests share a
// partition, as a product's events do).
func (f *fixture) produce(topic string, key string, values ...[]byte) {
	f.t.Helper()
	rs := make([]*kgo.Record, len(values))
	for i, v := range values {
		rs[i] = &kgo.Record{Topic: topic, Key: []byte(key), Value: v}
	}
	if err := f.prod.ProduceSync(f.ctx, rs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

func request(id, user string) []byte {
	b, _ := json.Marshal(kafkaapi.NotificationEvent{NotificationID: id, UserID: user, ProductID: "42",
		NotificationType: "PRICE_DROP", Title: "Price drop", Body: "Now 8,500", Channels: []string{"IN_APP"}, Priority: "HIGH"})
	return b
}

// consumer runs a consumer until the returned stop is called (or the
// test ends); stop waits for Run to return.
func (f *fixture) consumer(c kafkaapi.Client, cfg kafkaapi.Config) (stop func()) {
	f.t.Helper()
	_, stop = f.startConsumer(c, cfg)
	return stop
}

// startConsumer is consumer, and returns the Consumer too.
func (f *fixture) startConsumer(c kafkaapi.Client, cfg kafkaapi.Config) (cons *kafkaapi.Consumer, stop func()) {
	f.t.Helper()
	cfg.Brokers = []string{f.broker.Addr()}
	if cfg.Topics == nil {
		cfg.Topics = []kafkaapi.Topic{{Name: requests, Kind: kafkaapi.KindNotifications}, {Name: "events.v1", Kind: kafkaapi.KindEvents},
			{Name: "interests.v1", Kind: kafkaapi.KindInterests}}
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = 10 * time.Millisecond
	}
	cfg.Options = append(cfg.Options, kgo.SessionTimeout(6*time.Second), kgo.RebalanceTimeout(6*time.Second),
		kgo.HeartbeatInterval(200*time.Millisecond))
	cons, err := kafkaapi.New(cfg, c)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- cons.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				f.t.Errorf("consumer: %v", err)
			}
		})
	}
	f.t.Cleanup(stop)
	return cons, stop
}

// notifications counts each user's notifications, and checks each is
// keyed by its request's notificationId.
func (f *fixture) notifications(users int) int {
	f.t.Helper()
	total := 0
	for i := range users {
		page, err := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: user(i), Limit: 100})
		if err != nil {
			f.t.Fatal(err)
		}
		total += len(page.Notifications)
	}
	return total
}

func (f *fixture) waitFor(what string, timeout time.Duration, ok func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countingClient passes calls through and counts the Enqueue calls that
// returned (whatever their answer).
type countingClient struct {
	kafkaapi.Client
	calls atomic.Int64
	// before, when set, runs before each call; an error fails the call.
	before func(n int64) error
}

func (c *countingClient) Enqueue(ctx context.Context, r herald.Request) (herald.Result, error) {
	n := c.calls.Add(1)
	if c.before != nil {
		if err := c.before(n); err != nil {
			return herald.Result{}, err
		}
	}
	return c.Client.Enqueue(ctx, r)
}

// Issue 20 item 8 / S3.1: a notification request on a topic is enqueued
// like POST /v1/notifications, once, idempotent by notificationId; the
// seed's enums become Herald's values.
func TestNotificationRequestsAreEnqueued(t *testing.T) {
	f := newFixture(t)
	f.users(3)
	for i := range 3 {
		f.produce(requests, user(i), request("n-"+user(i), user(i)))
	}
	f.consumer(f.client, kafkaapi.Config{})
	f.waitFor("3 notifications", 20*time.Second, func() bool { return f.notifications(3) == 3 })
	page, err := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: user(1), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.client.GetNotification(f.ctx, page.Notifications[0].NotificationID)
	if err != nil {
		t.Fatal(err)
	}
	if n.IdempotencyKey != "n-u001" || n.Type != "price_drop" || n.Priority != heraldtype.PriorityHigh ||
		n.DedupeKey != "42" || n.Data["productId"] != "42" || len(n.Channels) != 1 || n.Channels[0] != heraldtype.ChannelInApp {
		t.Fatalf("enqueued notification: %+v", n.Notification)
	}
}

// S3.1: offsets are committed only after the enqueue's transaction, and
// a redelivered record replays its trigger. Every offset commit is lost
// (the broker refuses it), so a second consumer of the group re-reads the
// whole topic: still exactly one notification per request.
func TestLostOffsetCommitsReplayWithoutDuplicates(t *testing.T) {
	f := newFixture(t)
	const users, perUser = 10, 10
	f.users(users)
	for i := range users {
		vals := make([][]byte, perUser)
		for j := range perUser {
			vals[j] = request(fmt.Sprintf("n-%d-%d", i, j), user(i))
		}
		f.produce(requests, user(i), vals...)
	}
	// Refuse every offset commit while the first consumer runs.
	var refused atomic.Int64
	f.broker.Cluster().ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.broker.Cluster().KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				// OFFSET_METADATA_TOO_LARGE: refused for good, at once (a
				// retriable code would be retried until the call's
				// deadline), without touching the group's membership.
				sp.ErrorCode = 12
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		refused.Add(1)
		return resp, nil, true
	})
	first := &countingClient{Client: f.client}
	stop := f.consumer(first, kafkaapi.Config{Group: "g"})
	f.waitFor("every request applied", 90*time.Second, func() bool { return f.notifications(users) == users*perUser })
	stop()
	if refused.Load() == 0 {
		t.Fatal("no offset commit was attempted")
	}
	f.broker.Cluster().DropControl()

	second := &countingClient{Client: f.client}
	f.consumer(second, kafkaapi.Config{Group: "g"})
	f.waitFor("the second consumer to re-read the topic", 90*time.Second, func() bool { return second.calls.Load() >= users*perUser })
	if got := f.notifications(users); got != users*perUser {
		t.Fatalf("%d notifications after the redelivery, want %d", got, users*perUser)
	}
	t.Logf("first consumer: %d calls, %d refused commits; second: %d calls (replays)", first.calls.Load(), refused.Load(), second.calls.Load())
}

// S3.1: a second member joining mid-stream (a rebalance while the first
// is applying) and the first then leaving lose nothing and duplicate
// nothing.
func TestRebalanceMidStreamLosesAndDuplicatesNothing(t *testing.T) {
	f := newFixture(t)
	const users, perUser = 20, 15
	f.users(users)
	// A slow first member, so the rebalance lands mid-stream.
	slow := &countingClient{Client: f.client, before: func(int64) error { time.Sleep(2 * time.Millisecond); return nil }}
	stopA := f.consumer(slow, kafkaapi.Config{Group: "g", MaxPollRecords: 20})
	for i := range users {
		vals := make([][]byte, perUser)
		for j := range perUser {
			vals[j] = request(fmt.Sprintf("n-%d-%d", i, j), user(i))
		}
		f.produce(requests, user(i), vals...)
	}
	f.waitFor("the first member to start", 20*time.Second, func() bool { return slow.calls.Load() > 50 })
	other := &countingClient{Client: f.client}
	f.consumer(other, kafkaapi.Config{Group: "g", MaxPollRecords: 20})
	f.waitFor("the second member to get partitions", 30*time.Second, func() bool { return other.calls.Load() > 0 })
	stopA()
	f.waitFor("every request applied", 120*time.Second, func() bool { return f.notifications(users) == users*perUser })
	// Give a duplicate the time to show up.
	time.Sleep(300 * time.Millisecond)
	if got := f.notifications(users); got != users*perUser {
		t.Fatalf("%d notifications, want %d", got, users*perUser)
	}
	t.Logf("first member: %d calls, second: %d calls", slow.calls.Load(), other.calls.Load())
}

// S3.10: a record that does not decode is dead-lettered at once, one that
// keeps failing after its retries, each with headers naming its origin and
// error; the partition goes on with the next record.
func TestPoisonRecordsAreDeadLettered(t *testing.T) {
	f := newFixture(t)
	f.users(1)
	f.produce(requests, "k", []byte(`{"notificationId":`), // does not decode
		request("n-ghost", "nobody"), // an unknown user: retried, then dead-lettered
		request("n-ok", user(0)))
	f.produce("events.v1", "k", []byte(`{"name":"x","user_id":"u000","data":{"price":[1]}}`))
	c := &countingClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{Retries: 2})
	f.waitFor("the good request after the poison", 20*time.Second, func() bool { return f.notifications(1) == 1 })

	got := f.deadLetters(requests+".dlq", 2)
	for k, v := range f.deadLetters("events.v1.dlq", 1) {
		got[k] = v
	}
	if len(got) != 3 {
		t.Fatalf("dead letters: %v, want 3", got)
	}
	if h := got[requests+"@0"]; h[kafkaapi.HeaderAttempts] != "1" || h[kafkaapi.HeaderError] == "" {
		t.Fatalf("undecodable record's headers: %v (want 1 attempt and the decode error)", h)
	}
	if h := got[requests+"@1"]; h[kafkaapi.HeaderAttempts] != "3" || h[kafkaapi.HeaderPartition] == "" {
		t.Fatalf("failing record's headers: %v (want 3 attempts: 1 + 2 retries)", h)
	}
	if h := got["events.v1@0"]; h[kafkaapi.HeaderAttempts] != "1" {
		t.Fatalf("bad event's headers: %v", h)
	}
	if n := c.calls.Load(); n != 4 {
		t.Fatalf("%d enqueue calls, want 4 (the unknown user 3 times, the good one once)", n)
	}

	// Each is kept in the database too (GET /v1/events/dead), and the one
	// that decoded replays once its cause is fixed.
	page, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{Topic: requests})
	if err != nil || len(page.DeadEvents) != 2 {
		t.Fatalf("dead events of %s: %+v, %v", requests, page, err)
	}
	ghost, poison := page.DeadEvents[0], page.DeadEvents[1] // newest first
	if ghost.Offset != 1 || ghost.Attempts != 3 || len(ghost.Payload) == 0 || poison.Payload != nil || poison.Attempts != 1 {
		t.Fatalf("dead events: %+v / %+v", ghost, poison)
	}
	if err := f.client.ReplayDeadEvent(f.ctx, poison.ID); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("replaying an undecodable record: %v, want conflict", err)
	}
	if err := f.client.ReplayDeadEvent(f.ctx, ghost.ID); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("replaying before the user exists: %v", err)
	}
	if d, _ := f.client.GetDeadEvent(f.ctx, ghost.ID); d.ReplayedAt != nil || d.ReplayError == "" {
		t.Fatalf("a failed replay is not recorded: %+v", d)
	}
	if _, err := f.client.PutUser(f.ctx, "nobody", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	dry, err := f.client.ReplayDeadEvents(f.ctx, herald.DeadEventFilter{Kind: kafkaapi.KindNotifications.String()}, true)
	// Issue 30 item 4: the dry run says what a replay would make again:
	// not the undecodable one.
	if err != nil || dry.Matched != 2 || dry.Skipped != 1 || dry.Replayed != 0 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	res, err := f.client.ReplayDeadEvents(f.ctx, herald.DeadEventFilter{Topic: requests}, false)
	if err != nil || res.Replayed != 1 || res.Failed != 0 || res.Skipped != 1 {
		t.Fatalf("bulk replay: %+v, %v (want the ghost replayed, the undecodable one skipped)", res, err)
	}
	hist, err := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: "nobody", Limit: 10})
	if err != nil || len(hist.Notifications) != 1 {
		t.Fatalf("the replayed request: %+v, %v", hist, err)
	}
	n, _ := f.client.GetNotification(f.ctx, hist.Notifications[0].NotificationID)
	if n.IdempotencyKey != "n-ghost" {
		t.Fatalf("replayed under key %q", n.IdempotencyKey)
	}
	// Replaying it again sends nothing twice: the notificationId holds.
	if err := f.client.ReplayDeadEvent(f.ctx, ghost.ID); err != nil {
		t.Fatal(err)
	}
	if hist, _ := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: "nobody", Limit: 10}); len(hist.Notifications) != 1 {
		t.Fatalf("a second replay enqueued again: %d", len(hist.Notifications))
	}
}

// deadLetters reads want records of a dead-letter topic, keyed by their
// origin (topic@offset), each with its headers.
func (f *fixture) deadLetters(topic string, want int) map[string]map[string]string {
	f.t.Helper()
	dlq, err := kgo.NewClient(kgo.SeedBrokers(f.broker.Addr()), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		f.t.Fatal(err)
	}
	defer dlq.Close()
	got := map[string]map[string]string{}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(f.ctx, time.Second)
		fs := dlq.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			got[h[kafkaapi.HeaderTopic]+"@"+h[kafkaapi.HeaderOffset]] = h
		})
	}
	return got
}

// Issue 20 item 3: a behaviour topic records interests; a replayed
// record changes nothing.
func TestInterestTopic(t *testing.T) {
	f := newFixture(t)
	f.users(1)
	rec := []byte(`{"user_id":"u000","subject":"product:42","kind":"VIEW","at":"2026-11-01T10:00:00Z","data":{"src":"app"}}`)
	f.produce("interests.v1", "u000", rec, rec, []byte(`{"user_id":"u000","subject":"product:42","kind":"CLICK"}`))
	f.consumer(f.client, kafkaapi.Config{})
	var page herald.InterestPage
	f.waitFor("two interests", 20*time.Second, func() bool {
		var err error
		page, err = f.client.ListInterests(f.ctx, herald.InterestFilter{UserID: "u000"})
		return err == nil && len(page.Interests) == 2
	})
	if in := page.Interests[1]; in.Kind != "VIEW" || !in.At.Equal(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)) || in.Data["src"] != "app" {
		t.Fatalf("interests: %+v", page.Interests)
	}
}

// Bad configuration is refused naming the key.
func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		cfg   kafkaapi.Config
		field string
	}{
		{kafkaapi.Config{Topics: []kafkaapi.Topic{{Name: "a", Kind: kafkaapi.KindEvents}}}, "kafka.brokers"},
		{kafkaapi.Config{Brokers: []string{"x:1"}}, "kafka.topics"},
		{kafkaapi.Config{Brokers: []string{"x:1"}, Topics: []kafkaapi.Topic{{Kind: kafkaapi.KindEvents}}}, "kafka.topics[0].name"},
		{kafkaapi.Config{Brokers: []string{"x:1"}, Topics: []kafkaapi.Topic{{Name: "a", Kind: "avro"}}}, "kafka.topics[0].kind"},
		{kafkaapi.Config{Brokers: []string{"x:1"}, Topics: []kafkaapi.Topic{{Name: "a", Kind: kafkaapi.KindEvents}, {Name: "a", Kind: kafkaapi.KindEvents}}}, "kafka.topics[1].name"},
	} {
		_, err := kafkaapi.New(tc.cfg, &countingClient{})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != tc.field {
			t.Fatalf("%+v: err %v, want invalid_argument naming %s", tc.cfg, err, tc.field)
		}
	}
}

// flakyDeadLetters fails the first fails RecordDeadEvent calls, as a
// database that does not answer would.
type flakyDeadLetters struct {
	kafkaapi.Client
	fails, calls atomic.Int64
}

func (f *flakyDeadLetters) RecordDeadEvent(ctx context.Context, d heraldtype.DeadEvent) (int64, error) {
	if f.calls.Add(1) <= f.fails.Load() {
		return 0, errors.New("database does not answer")
	}
	return f.Client.RecordDeadEvent(ctx, d)
}

// S3.10: a dead letter the database cannot record yet holds its partition
// (the offset is not committed past it) and is recorded once the database
// answers; the record after it is applied only then. A schema registry
// that does not answer is a retried failure, not a decode error: the
// record is dead-lettered only after its retries.
func TestDeadLetterWaitsForTheDatabase(t *testing.T) {
	f := newFixture(t)
	f.users(1)
	f.produce(requests, "k", []byte(`not json`), request("n-after", user(0)))
	c := &flakyDeadLetters{Client: f.client}
	c.fails.Store(2)
	f.consumer(c, kafkaapi.Config{})
	f.waitFor("the record after the poison", 20*time.Second, func() bool { return f.notifications(1) == 1 })
	if n := c.calls.Load(); n != 3 {
		t.Fatalf("RecordDeadEvent called %d times, want 3 (two failures, then recorded)", n)
	}
	page, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{Topic: requests})
	if err != nil || len(page.DeadEvents) != 1 {
		t.Fatalf("dead events: %+v, %v", page, err)
	}

	// The registry is down: two tries, then the dead-letter topic.
	const avroTopic = "avro.v1"
	f.produce(avroTopic, "k", []byte{0, 0, 0, 0, 1, 2})
	down := &countingClient{Client: f.client}
	f.consumer(down, kafkaapi.Config{Group: "avro", Retries: 1, SchemaRegistryURL: "http://127.0.0.1:1",
		Topics: []kafkaapi.Topic{{Name: avroTopic, Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro}}})
	got := f.deadLetters(avroTopic+".dlq", 1)
	if h := got[avroTopic+"@0"]; h[kafkaapi.HeaderAttempts] != "2" || !strings.Contains(h[kafkaapi.HeaderError], "schema registry") {
		t.Fatalf("a record whose registry is down: %v, want 2 attempts naming the registry", got)
	}
}
