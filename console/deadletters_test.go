package console_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// deadDeliveries triggers n notifications to a user whose provider fails
// every send permanently, and waits until their deliveries are dead.
func (e *env) deadDeliveries(n int, typ string) []heraldtype.Delivery {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "alice", herald.UserInput{Timezone: "UTC"}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.client.RegisterDevice(ctx, "alice", herald.DeviceInput{DeviceID: "alice-phone", Token: "tok-alice", Platform: "android"}); err != nil {
		e.t.Fatal(err)
	}
	for i := range n {
		_, err := e.client.Enqueue(ctx, herald.Request{UserID: "alice", Type: typ, Title: "hi", Body: "b" + strconv.Itoa(i),
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	var ds []heraldtype.Delivery
	deadline := time.Now().Add(15 * time.Second)
	for {
		p, err := e.client.ListDeliveries(ctx, heraldtype.DeliveryFilter{State: heraldtype.StateDead, Type: typ, Limit: 1000})
		if err != nil {
			e.t.Fatal(err)
		}
		if ds = p.Deliveries; len(ds) >= n {
			return ds
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d of %d deliveries dead", len(ds), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeadLettersFilterAndReplayOne: the filter narrows the list by
// error code, channel and type; replaying one redirects back to the same
// filter (a reload does not replay again) and the delivery leaves the
// list.
func TestDeadLettersFilterAndReplayOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	dead := e.deadDeliveries(2, "promo")
	e.deadDeliveries(1, "receipt")
	e.signIn("key-admin").expect(t, 303)

	all := e.get("/console/dead-letters").expect(t, 200)
	wellFormed(t, all.body)
	if got := strings.Count(all.body, "data-delivery-id="); got != 3 {
		t.Fatalf("listed %d, want 3:\n%s", got, all.body)
	}
	for _, want := range []string{`<form id="dead-filter" method="get"`, `<table id="dead-deliveries">`, `<form id="bulk-replay" method="post"`, `id="bulk-dry-run"`, `<form class="replay" method="post"`} {
		if !strings.Contains(all.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for q, want := range map[string]int{
		"type=promo":                   2,
		"type=promo&code=BAD_TOKEN":    2,
		"code=OTHER":                   0,
		"channel=sms":                  0,
		"channel=push&user=alice":      3,
		"state=unknown":                0,
		"since=2000-01-01T00:00":       3,
		"until=2000-01-01T00:00":       0,
		"kind=deliveries&type=receipt": 1,
	} {
		r := e.get("/console/dead-letters?"+q).expect(t, 200)
		if got := strings.Count(r.body, "data-delivery-id="); got != want {
			t.Errorf("%s: listed %d, want %d", q, got, want)
		}
	}
	bad := e.get("/console/dead-letters?since=yesterday").expect(t, 400)
	if !strings.Contains(bad.body, `data-code="invalid_argument"`) || !strings.Contains(bad.body, "yesterday") {
		t.Errorf("a bad time:\n%s", bad.body)
	}

	id := strconv.FormatInt(dead[0].ID, 10)
	page := e.get("/console/dead-letters?type=promo").expect(t, 200)
	r := e.post("/console/dead-letters/deliveries/"+id+"/replay", url.Values{"csrf": {page.csrf(t)}, "kind": {"deliveries"}, "type": {"promo"}}).expect(t, 303)
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/console/dead-letters?") || !strings.Contains(loc, "type=promo") {
		t.Fatalf("after the replay: %q", loc)
	}
	after := e.get(loc).expect(t, 200)
	if !strings.Contains(after.body, `id="replay-result"`) {
		t.Errorf("no replay result:\n%s", after.body)
	}
	d, err := e.client.ListDeliveries(context.Background(), heraldtype.DeliveryFilter{NotificationID: dead[0].NotificationID})
	if err != nil || len(d.Deliveries) != 1 || d.Deliveries[0].ReplayCount != 1 {
		t.Fatalf("the delivery after its replay: %+v %v", d, err)
	}
	// Replaying it again while it is not dead is refused, shown on the page.
	r = e.post("/console/dead-letters/deliveries/"+id+"/replay", url.Values{"csrf": {page.csrf(t)}})
	if r.status != 303 && r.status != 409 {
		t.Fatalf("a second replay: %d", r.status)
	}
}

// TestBulkReplay: the dry run counts and changes nothing; the
// confirmation replays them and redirects to the result.
func TestBulkReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	e.deadDeliveries(3, "promo")
	e.deadDeliveries(1, "receipt")
	e.signIn("key-admin").expect(t, 303)
	page := e.get("/console/dead-letters?type=promo").expect(t, 200)
	form := url.Values{"csrf": {page.csrf(t)}, "kind": {"deliveries"}, "type": {"promo"}, "state": {"dead"}}
	dry := url.Values{"dry_run": {"1"}}
	for k, v := range form {
		dry[k] = v
	}
	r := e.post("/console/dead-letters/replay", dry).expect(t, 200)
	wellFormed(t, r.body)
	if !strings.Contains(r.body, `<p id="bulk-dry-run-result" data-count="3"`) || !strings.Contains(r.body, `id="bulk-replay-confirm"`) {
		t.Fatalf("dry run:\n%s", r.body)
	}
	if p, _ := e.client.ListDeliveries(context.Background(), heraldtype.DeliveryFilter{State: heraldtype.StateDead, Limit: 100}); len(p.Deliveries) != 4 {
		t.Fatalf("the dry run changed something: %d dead", len(p.Deliveries))
	}
	e.provider.heal()
	form.Set("confirm", "1")
	r = e.post("/console/dead-letters/replay", form).expect(t, 303)
	res := e.get(r.header.Get("Location")).expect(t, 200)
	if !strings.Contains(res.body, `<p id="bulk-replay-result" data-replayed="3"`) {
		t.Fatalf("result:\n%s", res.body)
	}
	// The receipt was not selected and stays dead.
	p, _ := e.client.ListDeliveries(context.Background(), heraldtype.DeliveryFilter{State: heraldtype.StateDead, Limit: 100})
	if len(p.Deliveries) != 1 || p.Deliveries[0].Type != "receipt" {
		t.Fatalf("still dead: %+v", p.Deliveries)
	}
}

// TestReadOnlySessionCannotReplay: a console-scope session sees the dead
// letters without any replay button, and a replay it posts anyway (with a
// valid CSRF token) is refused with permission_denied; without the token
// it is csrf_invalid first.
func TestReadOnlySessionCannotReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	dead := e.deadDeliveries(1, "promo")
	e.signIn("key-console").expect(t, 303)
	page := e.get("/console/dead-letters").expect(t, 200)
	if !strings.Contains(page.body, "data-delivery-id=") {
		t.Fatalf("the read-only session does not see the dead letter:\n%s", page.body)
	}
	for _, button := range []string{`class="replay"`, `id="bulk-replay"`, `id="bulk-dry-run"`} {
		if strings.Contains(page.body, button) {
			t.Errorf("a read-only session sees %s", button)
		}
	}
	id := strconv.FormatInt(dead[0].ID, 10)
	r := e.post("/console/dead-letters/deliveries/"+id+"/replay", url.Values{"csrf": {page.csrf(t)}}).expect(t, 403)
	if !strings.Contains(r.body, `<p id="error" data-code="permission_denied"`) {
		t.Fatalf("replay by a read-only session:\n%s", r.body)
	}
	r = e.post("/console/dead-letters/replay", url.Values{"csrf": {page.csrf(t)}, "dry_run": {"1"}}).expect(t, 403)
	if !strings.Contains(r.body, `data-code="permission_denied"`) {
		t.Fatalf("bulk replay by a read-only session:\n%s", r.body)
	}
	r = e.post("/console/dead-letters/deliveries/"+id+"/replay", url.Values{}).expect(t, 403)
	if !strings.Contains(r.body, `<p id="error" data-code="csrf_invalid"`) {
		t.Fatalf("replay without csrf:\n%s", r.body)
	}
	// Another session's token is not this one's.
	r = e.post("/console/dead-letters/deliveries/"+id+"/replay", url.Values{"csrf": {"csrf-tok-key-admin-b"}}).expect(t, 403)
	if !strings.Contains(r.body, `data-code="csrf_invalid"`) {
		t.Fatalf("replay with another session's token:\n%s", r.body)
	}
	if p, _ := e.client.ListDeliveries(context.Background(), heraldtype.DeliveryFilter{State: heraldtype.StateDead}); len(p.Deliveries) != 1 {
		t.Fatal("the refused replays changed something")
	}
}

// TestDeadEventsView lists dead events with the events kind.
func TestDeadEventsView(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	id, err := e.client.RecordDeadEvent(context.Background(), heraldtype.DeadEvent{Topic: "orders", Kind: herald.RecordEvents,
		Value: []byte("not json"), Error: "does not decode", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := e.get("/console/dead-letters?kind=events").expect(t, 200)
	wellFormed(t, r.body)
	if !strings.Contains(r.body, `<tr data-dead-event-id="`+strconv.FormatInt(id, 10)+`"`) || !strings.Contains(r.body, `<table id="dead-events">`) {
		t.Fatalf("dead events:\n%s", r.body)
	}
	dry := e.post("/console/dead-letters/replay", url.Values{"csrf": {r.csrf(t)}, "kind": {"events"}, "dry_run": {"1"}}).expect(t, 200)
	if !strings.Contains(dry.body, `data-count="0"`) {
		t.Fatalf("an undecodable record counted as replayable:\n%s", dry.body)
	}
	// By when Herald gave up on it (issue 34 item 2), the form keeping
	// the times; a bad time is named beside the form.
	d, err := e.client.GetDeadEvent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	since := d.CreatedAt.Add(time.Minute).Format("2006-01-02T15:04")
	r = e.get("/console/dead-letters?kind=events&since="+since).expect(t, 200)
	if strings.Contains(r.body, `data-dead-event-id="`) || !strings.Contains(r.body, `name="since" type="datetime-local" value="`+since+`"`) {
		t.Fatalf("dead events since a minute after the only one:\n%s", r.body)
	}
	until := d.CreatedAt.Add(time.Minute).Format("2006-01-02T15:04")
	r = e.get("/console/dead-letters?kind=events&until="+until).expect(t, 200)
	if !strings.Contains(r.body, `data-dead-event-id="`+strconv.FormatInt(id, 10)+`"`) {
		t.Fatalf("dead events until a minute after the only one:\n%s", r.body)
	}
	r = e.get("/console/dead-letters?kind=events&since=yesterday").expect(t, 400)
	if !strings.Contains(r.body, `data-code="invalid_argument"`) || !strings.Contains(r.body, "since") {
		t.Fatalf("a bad time:\n%s", r.body)
	}
}
