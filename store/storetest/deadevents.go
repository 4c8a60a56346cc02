package storetest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// DeadEvents (issue 20 item 5): a dead-lettered record is kept once per
// topic, partition and offset; listed newest first with filters; a
// replay's outcome is recorded.
func testDeadEvents(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	put := func(topic, kind string, offset int64, payload string) int64 {
		t.Helper()
		d := heraldtype.DeadEvent{Topic: topic, Partition: 2, Offset: offset, Kind: kind, Key: []byte("k"),
			Value: []byte(`{"raw":true}`), Error: "boom", Attempts: 4}
		if payload != "" {
			d.Payload = json.RawMessage(payload)
		}
		// a minute apart: offset 10 at base(), 11 a minute later, …
		id, err := f.s.PutDeadEvent(f.ctx, d, base().Add(time.Duration(offset-10)*time.Minute))
		if err != nil || id <= 0 {
			t.Fatalf("PutDeadEvent = %d, %v", id, err)
		}
		return id
	}
	a := put("requests", "notifications", 10, `{"user_id":"u1"}`)
	if again := put("requests", "notifications", 10, `{"user_id":"other"}`); again != a {
		t.Fatalf("the same record again got id %d, want %d", again, a)
	}
	b := put("events", "events", 11, "")
	c := put("requests", "notifications", 12, `{"user_id":"u2"}`)
	d, err := f.s.GetDeadEvent(f.ctx, a)
	if err != nil || d.Topic != "requests" || d.Partition != 2 || d.Offset != 10 || d.Kind != "notifications" ||
		!bytes.Equal(d.Key, []byte("k")) || !bytes.Equal(d.Value, []byte(`{"raw":true}`)) || d.Error != "boom" || d.Attempts != 4 ||
		d.ReplayedAt != nil {
		t.Fatalf("GetDeadEvent = %+v, %v", d, err)
	}
	var p map[string]string
	if json.Unmarshal(d.Payload, &p) != nil || p["user_id"] != "u1" {
		t.Fatalf("payload = %s", d.Payload)
	}
	wantTime(t, "CreatedAt", d.CreatedAt, base())
	if d, _ := f.s.GetDeadEvent(f.ctx, b); d.Payload != nil {
		t.Fatalf("an undecoded record's payload = %s", d.Payload)
	}
	ids := func(filter heraldtype.DeadEventFilter) []int64 {
		t.Helper()
		var out []int64
		for {
			ds, next, err := f.s.ListDeadEvents(f.ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				out = append(out, d.ID)
			}
			if next == "" {
				return out
			}
			filter.Cursor = next
		}
	}
	if got := ids(heraldtype.DeadEventFilter{Limit: 1}); len(got) != 3 || got[0] != c || got[2] != a {
		t.Fatalf("all, newest first: %v", got)
	}
	if got := ids(heraldtype.DeadEventFilter{Topic: "requests"}); len(got) != 2 {
		t.Fatalf("by topic: %v", got)
	}
	if got := ids(heraldtype.DeadEventFilter{Kind: "events"}); len(got) != 1 || got[0] != b {
		t.Fatalf("by kind: %v", got)
	}
	// Issue 34 item 2: by when Herald gave up on the record.
	if got := ids(heraldtype.DeadEventFilter{From: base().Add(time.Minute), Limit: 1}); len(got) != 2 || got[0] != c || got[1] != b {
		t.Fatalf("from a minute on: %v", got)
	}
	if got := ids(heraldtype.DeadEventFilter{To: base().Add(time.Minute)}); len(got) != 1 || got[0] != a {
		t.Fatalf("before a minute: %v", got)
	}
	if got := ids(heraldtype.DeadEventFilter{From: base().Add(time.Minute), To: base().Add(2 * time.Minute), Topic: "events"}); len(got) != 1 || got[0] != b {
		t.Fatalf("between, by topic: %v", got)
	}
	_, _, err = f.s.ListDeadEvents(f.ctx, heraldtype.DeadEventFilter{From: base(), To: base()})
	wantCode(t, err, heraldtype.EINVALID)
	if err := f.s.MarkDeadEventReplayed(f.ctx, a, "still failing", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.s.GetDeadEvent(f.ctx, a); d.ReplayedAt != nil || d.ReplayError != "still failing" {
		t.Fatalf("after a failed replay: %+v", d)
	}
	if err := f.s.MarkDeadEventReplayed(f.ctx, a, "", at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	d, _ = f.s.GetDeadEvent(f.ctx, a)
	if d.ReplayedAt == nil || d.ReplayError != "" {
		t.Fatalf("after a replay: %+v", d)
	}
	wantTime(t, "ReplayedAt", *d.ReplayedAt, at(time.Hour))
	if got := ids(heraldtype.DeadEventFilter{Replayed: "yes"}); len(got) != 1 || got[0] != a {
		t.Fatalf("replayed: %v", got)
	}
	if got := ids(heraldtype.DeadEventFilter{Replayed: "no"}); len(got) != 2 {
		t.Fatalf("not replayed: %v", got)
	}
	_, err = f.s.GetDeadEvent(f.ctx, 999999)
	wantCode(t, err, heraldtype.ENOTFOUND)
	wantCode(t, f.s.MarkDeadEventReplayed(f.ctx, 999999, "", base()), heraldtype.ENOTFOUND)
	_, _, err = f.s.ListDeadEvents(f.ctx, heraldtype.DeadEventFilter{Replayed: "maybe"})
	wantCode(t, err, heraldtype.EINVALID)
	testDeadEventsNeverLost(t, f)
}

// Issue 30 items 1 and 4: a tombstone and an empty value are kept as
// such; a second record at a position already used (a topic recreated)
// is kept beside the first, while the same record dead-lettered again
// (a crash before the offset commit) is kept once.
func testDeadEventsNeverLost(t *testing.T, f *fixture) {
	t.Helper()
	ts := base().Add(-time.Hour)
	rec := func(value []byte, tombstone bool, at time.Time) heraldtype.DeadEvent {
		return heraldtype.DeadEvent{Topic: "recreated", Partition: 0, Offset: 0, Kind: "events", Value: value,
			Tombstone: tombstone, RecordTimestamp: at, Error: "decode: the record has no value", Attempts: 1}
	}
	put := func(d heraldtype.DeadEvent) int64 {
		t.Helper()
		id, err := f.s.PutDeadEvent(f.ctx, d, base())
		if err != nil || id <= 0 {
			t.Fatalf("PutDeadEvent(%+v) = %d, %v", d, id, err)
		}
		return id
	}
	tomb := put(rec(nil, true, ts))
	if again := put(rec(nil, true, ts)); again != tomb {
		t.Fatalf("the same tombstone dead-lettered again got id %d, want %d (kept once)", again, tomb)
	}
	empty := put(rec([]byte{}, false, ts))
	later := put(rec(nil, true, ts.Add(time.Minute)))  // the topic recreated: offset 0 again
	other := put(rec([]byte("x"), false, time.Time{})) // no timestamp known
	ids := map[int64]bool{tomb: true, empty: true, later: true, other: true}
	if len(ids) != 4 {
		t.Fatalf("four records at one position got ids %d, %d, %d, %d; want four rows", tomb, empty, later, other)
	}
	d, err := f.s.GetDeadEvent(f.ctx, tomb)
	if err != nil || !d.Tombstone || d.Value != nil || d.Offset != 0 {
		t.Fatalf("tombstone = %+v, %v", d, err)
	}
	wantTime(t, "RecordTimestamp", d.RecordTimestamp, ts)
	d, err = f.s.GetDeadEvent(f.ctx, empty)
	if err != nil || d.Tombstone || d.Value == nil || len(d.Value) != 0 {
		t.Fatalf("empty value = %+v (value %#v), %v", d, d.Value, err)
	}
	if d, _ := f.s.GetDeadEvent(f.ctx, other); !d.RecordTimestamp.IsZero() || string(d.Value) != "x" {
		t.Fatalf("without a timestamp = %+v", d)
	}
	page, _, err := f.s.ListDeadEvents(f.ctx, heraldtype.DeadEventFilter{Topic: "recreated"})
	if err != nil || len(page) != 4 {
		t.Fatalf("the recreated topic's dead events: %d, %v; want 4", len(page), err)
	}
}
