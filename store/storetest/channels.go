package storetest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Tests of the channels beyond push (store/channels.go; S3.6, S4.5): the
// sms / email / in_app rules of Enqueue, Claim of addressed deliveries,
// the suppression list, the inbox, and Web Push keys on devices.

// ChannelProviders is the routing table of the sms and email channels
// the suite enqueues with.
func ChannelProviders() map[heraldtype.Channel]string {
	return map[heraldtype.Channel]string{heraldtype.ChannelSMS: "twilio", heraldtype.ChannelEmail: "smtp"}
}

// contact creates a user with a phone number and an e-mail address (""
// for none).
func (f *fixture) contact(id, phone, email string) {
	f.t.Helper()
	_, err := f.s.UpsertUser(f.ctx, heraldtype.User{ID: id, Timezone: "UTC", Phone: phone, Email: email}, base())
	if err != nil {
		f.t.Fatalf("UpsertUser(%s): %v", id, err)
	}
}

// on returns a notification for userID on the given channels.
func (f *fixture) on(userID string, channels ...heraldtype.Channel) heraldtype.Notification {
	n := f.notification(userID)
	n.Channels = channels
	return n
}

// channelParams enqueues ns with push and channel routing.
func channelParams(ns ...heraldtype.Notification) store.EnqueueParams {
	p := params(ns...)
	p.ChannelProviders = ChannelProviders()
	return p
}

// byChannel returns the notification's delivery on channel, failing if
// there is not exactly one.
func (f *fixture) byChannel(notificationID string, ch heraldtype.Channel) heraldtype.Delivery {
	f.t.Helper()
	var found []heraldtype.Delivery
	for _, d := range f.deliveries(notificationID) {
		if d.Channel == ch {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		f.t.Fatalf("notification %s has %d %s deliveries, want 1", notificationID, len(found), ch)
	}
	return found[0]
}

// wantSkipped fails unless d was skipped at enqueue with code.
func wantSkipped(t *testing.T, d heraldtype.Delivery, code string) {
	t.Helper()
	if d.State != heraldtype.StateSkipped || d.LastErrorCode != code || d.LastError == "" || d.Attempt != 0 {
		t.Fatalf("delivery = %+v, want skipped with %s", d, code)
	}
	wantTimePtr(t, "FinishedAt", d.FinishedAt, base())
	wantOutcomes(t, d, heraldtype.OutcomeSkipped)
	if a := d.Attempts[0]; a.ErrorCode != code {
		t.Fatalf("skipped attempt = %+v, want error code %s", a, code)
	}
}

func testChannels(t *testing.T, newStore NewStore) {
	t.Run("EnqueueRules", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.contact("u1", "+15550001", "u1@example.com")
		f.contact("u2", "", "u2@example.com")
		f.device("u1", "a1", "android")
		all := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp)
		all.Data = map[string]string{"order": "42"}
		noPhone := f.on("u2", heraldtype.ChannelSMS, heraldtype.ChannelEmail)
		later := f.on("u1", heraldtype.ChannelSMS)
		later.SendAt = at(time.Hour)
		res := f.enqueue(channelParams(all, noPhone, later))
		counts := []int{res.Notifications[0].Deliveries, res.Notifications[1].Deliveries, res.Notifications[2].Deliveries}
		if !slices.Equal(counts, []int{4, 2, 1}) {
			t.Fatalf("delivery counts = %v, want [4 2 1] (skipped ones included)", counts)
		}

		if d := f.byChannel(all.ID, heraldtype.ChannelPush); d.DeviceID != "a1" || d.Address != "" || d.State != heraldtype.StatePending {
			t.Fatalf("push delivery = %+v", d)
		}
		for ch, want := range map[heraldtype.Channel][2]string{
			heraldtype.ChannelSMS: {"twilio", "+15550001"}, heraldtype.ChannelEmail: {"smtp", "u1@example.com"},
		} {
			d := f.byChannel(all.ID, ch)
			if d.Provider != want[0] || d.Address != want[1] || d.DeviceID != "" || d.State != heraldtype.StatePending ||
				d.Attempt != 0 || d.MaxAttempts != 3 || d.FinishedAt != nil || len(d.Attempts) != 0 || d.UserID != "u1" {
				t.Fatalf("%s delivery = %+v, want pending via %s to %s", ch, d, want[0], want[1])
			}
			wantTime(t, "RunAt", d.RunAt, base())
		}

		// in_app: the inbox item is the delivery, sent at once.
		if len(res.Inbox) != 1 {
			t.Fatalf("Inbox = %+v, want one item", res.Inbox)
		}
		it := res.Inbox[0]
		if it.ID <= 0 || it.UserID != "u1" || it.NotificationID != all.ID || it.Type != all.Type || it.Title != all.Title ||
			it.Body != all.Body || it.Data["order"] != "42" || len(it.Data) != 1 || it.ReadAt != nil || it.ArchivedAt != nil {
			t.Fatalf("inbox item = %+v", it)
		}
		wantTime(t, "CreatedAt", it.CreatedAt, base())
		d := f.byChannel(all.ID, heraldtype.ChannelInApp)
		if d.Provider != store.InboxProvider || d.State != heraldtype.StateSent || d.Attempt != 1 || d.DeviceID != "" ||
			d.ProviderMessageID != strconv.FormatInt(it.ID, 10) || d.Guarantee != all.Guarantee {
			t.Fatalf("in-app delivery = %+v, want sent via inbox with message id %d", d, it.ID)
		}
		wantTimePtr(t, "FinishedAt", d.FinishedAt, base())
		wantOutcomes(t, d, heraldtype.OutcomeSent)
		if a := d.Attempts[0]; a.Attempt != 1 || a.ProviderMessageID != d.ProviderMessageID {
			t.Fatalf("in-app attempt = %+v", a)
		}
		wantTime(t, "attempt At", d.Attempts[0].At, base())

		wantSkipped(t, f.byChannel(noPhone.ID, heraldtype.ChannelSMS), store.CodeNoAddress)
		if d := f.byChannel(noPhone.ID, heraldtype.ChannelEmail); d.State != heraldtype.StatePending || d.Address != "u2@example.com" {
			t.Fatalf("email to a user without phone = %+v", d)
		}
		wantTime(t, "RunAt", f.delivery(later.ID).RunAt, at(time.Hour))

		st := f.stats()
		if st[heraldtype.StatePending] != 5 || st[heraldtype.StateSent] != 1 || st[heraldtype.StateSkipped] != 1 {
			t.Fatalf("stats = %v, want 5 pending, 1 sent, 1 skipped", st)
		}

		// No provider for a channel: no delivery, as for a push platform.
		bare := f.on("u1", heraldtype.ChannelSMS, heraldtype.ChannelEmail)
		if res := f.enqueue(params(bare)); res.Notifications[0].Deliveries != 0 || len(res.Inbox) != 0 {
			t.Fatalf("enqueue without channel providers = %+v", res)
		}
	})
	t.Run("InboxInTriggerOrder", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "a1", "android")
		// Notification ids sort against the trigger's order: the items
		// follow the trigger.
		first, second := f.on("u1", heraldtype.ChannelInApp), f.on("u1", heraldtype.ChannelInApp, heraldtype.ChannelPush)
		p := params(second, first)
		p.PushProviders = nil // no platform routed: no push delivery
		res := f.enqueue(p)
		if len(res.Inbox) != 2 || res.Inbox[0].NotificationID != second.ID || res.Inbox[1].NotificationID != first.ID ||
			res.Inbox[0].ID >= res.Inbox[1].ID {
			t.Fatalf("Inbox = %+v, want the items of %s then %s, ids ascending", res.Inbox, second.ID, first.ID)
		}
		if d := res.Notifications[0].Deliveries; d != 1 {
			t.Fatalf("%s has %d deliveries, want only the in-app one (push is not routed)", second.ID, d)
		}
	})
	t.Run("ReplayWritesNoInbox", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.contact("u1", "+15550001", "")
		p := channelParams(f.on("u1", heraldtype.ChannelInApp, heraldtype.ChannelSMS))
		p.IdempotencyKey, p.RequestHash = "k", "h"
		first := f.enqueue(p)
		if first.Notifications[0].Deliveries != 2 || len(first.Inbox) != 1 {
			t.Fatalf("first trigger = %+v", first)
		}
		p.Notifications = []heraldtype.Notification{f.on("u1", heraldtype.ChannelInApp, heraldtype.ChannelSMS)}
		again := f.enqueue(p)
		if !again.Replayed || len(again.Inbox) != 0 || !slices.Equal(again.Notifications, first.Notifications) {
			t.Fatalf("replay = %+v, want the first trigger's notifications and no inbox items", again)
		}
		items, _, _, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{})
		if err != nil || len(items) != 1 {
			t.Fatalf("inbox after a replay = %+v, %v; want one item", items, err)
		}
	})
	t.Run("ClaimAddressed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.contact("u1", "+15550001", "u1@example.com")
		f.contact("u2", "", "")
		f.device("u1", "a1", "android")
		n := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp)
		f.enqueue(channelParams(n, f.on("u2", heraldtype.ChannelSMS, heraldtype.ChannelInApp)))
		jobs := f.claim("w", base(), 100)
		if len(jobs) != 3 {
			t.Fatalf("claimed %d, want 3 (push, sms, email; skipped and in-app ones are final)", len(jobs))
		}
		got := map[heraldtype.Channel]heraldtype.Job{}
		for _, j := range jobs {
			got[j.Delivery.Channel] = j
			if j.Notification == nil || j.Notification.ID != n.ID {
				t.Fatalf("job notification = %+v", j.Notification)
			}
		}
		if j := got[heraldtype.ChannelPush]; j.Device == nil || j.Device.ID != "a1" {
			t.Fatalf("push job = %+v", j)
		}
		for ch, addr := range map[heraldtype.Channel]string{heraldtype.ChannelSMS: "+15550001", heraldtype.ChannelEmail: "u1@example.com"} {
			j := got[ch]
			if j.Device != nil || j.Delivery.Address != addr || j.Delivery.State != heraldtype.StateLeased {
				t.Fatalf("%s job = %+v, device %+v; want address %s and no device", ch, j.Delivery, j.Device, addr)
			}
		}
	})
	t.Run("Suppression", func(t *testing.T) { testSuppression(t, newStore) })
	t.Run("WebPushKeys", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		web := heraldtype.Device{ID: "w1", UserID: "u1", Platform: heraldtype.PlatformWeb, Token: "https://push.example/sub/1",
			PushOptIn: true, WebPushP256DH: "BP256", WebPushAuth: "auth16"}
		if d := f.upsertDevice(web, base()); d.WebPushP256DH != "BP256" || d.WebPushAuth != "auth16" {
			t.Fatalf("UpsertDevice = %+v, keys lost", d)
		}
		if d := f.getDevice("w1"); d.WebPushP256DH != "BP256" || d.WebPushAuth != "auth16" {
			t.Fatalf("GetDevice = %+v, keys lost", d)
		}
		ds, err := f.s.ListDevices(f.ctx, "u1")
		if err != nil || len(ds) != 1 || ds[0].WebPushP256DH != "BP256" || ds[0].WebPushAuth != "auth16" {
			t.Fatalf("ListDevices = %+v, %v", ds, err)
		}
		p := params(f.notification("u1"))
		p.PushProviders = map[heraldtype.Platform]string{heraldtype.PlatformWeb: "webpush"}
		f.enqueue(p)
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 1 || jobs[0].Device == nil || jobs[0].Device.WebPushP256DH != "BP256" || jobs[0].Device.WebPushAuth != "auth16" {
			t.Fatalf("claimed web job = %+v", jobs)
		}
		// A new subscription replaces the keys; none clears them.
		web.WebPushP256DH, web.WebPushAuth = "", ""
		if d := f.upsertDevice(web, at(time.Minute)); d.WebPushP256DH != "" || d.WebPushAuth != "" {
			t.Fatalf("re-registration without keys = %+v", d)
		}
	})
	t.Run("Inbox", func(t *testing.T) { testInbox(t, newStore) })
	t.Run("InboxSince", func(t *testing.T) { testInboxSince(t, newStore) })
	t.Run("InboxPruned", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		old := f.on("u1", heraldtype.ChannelInApp)
		recent := f.on("u1", heraldtype.ChannelInApp)
		recent.CreatedAt = at(2 * time.Hour)
		f.enqueue(params(old, recent))
		if n, err := f.s.PruneFinished(f.ctx, at(time.Hour), 10); err != nil || n != 1 {
			t.Fatalf("PruneFinished = %d, %v; want 1", n, err)
		}
		items, _, unread, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{})
		if err != nil || len(items) != 1 || items[0].NotificationID != recent.ID || unread != 1 {
			t.Fatalf("inbox after pruning = %+v (unread %d), %v; want only %s", items, unread, err, recent.ID)
		}
	})
}

func testSuppression(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.contact("u1", "+15550001", "u1@example.com")
	f.device("u1", "a1", "android")
	n := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail)
	f.enqueue(channelParams(n))
	jobs := map[heraldtype.Channel]heraldtype.Job{}
	for _, j := range f.claim("w", base(), 10) {
		jobs[j.Delivery.Channel] = j
	}
	// An outcome that is not applied (a stale attempt) suppresses nothing;
	// nor does a push delivery, which has no address.
	stale := outcome(jobs[heraldtype.ChannelEmail], store.Dead{SuppressAddress: true, SuppressReason: "mailbox_unknown"}, at(time.Second))
	stale.Attempt++
	f.complete(0, stale)
	push := outcome(jobs[heraldtype.ChannelPush], store.Dead{SuppressAddress: true, SuppressReason: "x"}, at(time.Second))
	stop := outcome(jobs[heraldtype.ChannelSMS], store.Dead{Failure: store.Failure{ErrorCode: "21610", Error: "unsubscribed recipient"},
		SuppressAddress: true, SuppressReason: "twilio_21610"}, at(2*time.Second))
	f.complete(2, push, stop)
	list := func(ch heraldtype.Channel) []heraldtype.Suppression {
		t.Helper()
		sps, err := f.s.ListSuppressions(f.ctx, ch)
		if err != nil {
			t.Fatalf("ListSuppressions(%q): %v", ch, err)
		}
		return sps
	}
	sps := list(heraldtype.ChannelSMS)
	if len(sps) != 1 || sps[0].Channel != heraldtype.ChannelSMS || sps[0].Address != "+15550001" || sps[0].Reason != "twilio_21610" {
		t.Fatalf("sms suppressions = %+v", sps)
	}
	wantTime(t, "suppression CreatedAt", sps[0].CreatedAt, at(2*time.Second))
	if sps := list(heraldtype.ChannelEmail); len(sps) != 0 {
		t.Fatalf("email suppressions = %+v after an outcome that was not applied", sps)
	}

	// The next trigger skips the suppressed phone, and only it.
	next := f.on("u1", heraldtype.ChannelSMS, heraldtype.ChannelEmail)
	f.enqueue(channelParams(next))
	d := f.byChannel(next.ID, heraldtype.ChannelSMS)
	wantSkipped(t, d, store.CodeSuppressed)
	if d.Address != "+15550001" || !strings.Contains(d.LastError, "twilio_21610") {
		t.Fatalf("suppressed delivery = %+v, want the address and the reason", d)
	}
	if d := f.byChannel(next.ID, heraldtype.ChannelEmail); d.State != heraldtype.StatePending {
		t.Fatalf("email delivery = %+v, want pending", d)
	}

	// Suppressing again replaces the reason; an empty reason falls back to
	// the error code. Newest first across channels.
	email := f.claim("w", at(time.Minute), 10)
	if len(email) != 1 || email[0].Delivery.Channel != heraldtype.ChannelEmail {
		t.Fatalf("claimed %+v, want the email delivery", email)
	}
	bounce := outcome(email[0], store.Dead{Failure: store.Failure{ErrorCode: "550"}, SuppressAddress: true}, at(3*time.Minute))
	f.complete(1, bounce)
	sps = list("")
	if len(sps) != 2 || sps[0].Channel != heraldtype.ChannelEmail || sps[0].Reason != "550" || sps[1].Channel != heraldtype.ChannelSMS {
		t.Fatalf("all suppressions = %+v, want email (reason 550) then sms", sps)
	}

	// Opting in again lifts it.
	if err := f.s.DeleteSuppression(f.ctx, heraldtype.ChannelSMS, "+15550001"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.s.DeleteSuppression(f.ctx, heraldtype.ChannelSMS, "+15550001"), heraldtype.ENOTFOUND)
	again := f.on("u1", heraldtype.ChannelSMS)
	f.enqueue(channelParams(again))
	if d := f.delivery(again.ID); d.State != heraldtype.StatePending || d.Address != "+15550001" {
		t.Fatalf("sms after the opt-in = %+v, want pending", d)
	}
	if sps := list(heraldtype.ChannelSMS); len(sps) != 0 {
		t.Fatalf("sms suppressions after delete = %+v", sps)
	}

	_, err := f.s.ListSuppressions(f.ctx, "fax")
	wantCode(t, err, heraldtype.EINVALID)
	wantCode(t, f.s.DeleteSuppression(f.ctx, heraldtype.ChannelPush, "x"), heraldtype.EINVALID)
	wantCode(t, f.s.DeleteSuppression(f.ctx, heraldtype.ChannelSMS, ""), heraldtype.EINVALID)
}
