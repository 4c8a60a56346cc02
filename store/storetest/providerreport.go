package storetest

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testProviderReports: Store.RecordProviderReport appends a provider's
// later report (a Twilio status callback) to a sent delivery's timeline,
// once per status, only for the delivery that has both the id and the
// provider message id, suppresses the address when asked, and moves
// nothing (issue 21 item 4).
func testProviderReports(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.contact("u1", "+15550001", "u1@example.com")
	n, other, early := f.on("u1", heraldtype.ChannelSMS), f.on("u1", heraldtype.ChannelSMS), f.on("u1", heraldtype.ChannelSMS)
	f.enqueue(channelParams(n, other, early))
	jobs := f.claim("w", base(), 10)
	if len(jobs) != 3 {
		t.Fatalf("claimed %d, want 3", len(jobs))
	}
	byNotification := map[string]heraldtype.Job{}
	for _, j := range jobs {
		byNotification[j.Delivery.NotificationID] = j
	}
	j := byNotification[n.ID]
	f.complete(2, outcome(j, store.Sent{ProviderMessageID: "SM1"}, at(time.Second)),
		outcome(byNotification[other.ID], store.Sent{ProviderMessageID: "SM2"}, at(time.Second)))
	id := j.Delivery.ID

	record := func(r store.ProviderReport, wantFound bool) {
		t.Helper()
		found, err := f.s.RecordProviderReport(f.ctx, r)
		if err != nil || found != wantFound {
			t.Fatalf("RecordProviderReport(%+v) = %v, %v; want %v", r, found, err, wantFound)
		}
	}
	// Another delivery's message id, or no such delivery: nothing.
	record(store.ProviderReport{DeliveryID: id, ProviderMessageID: "SM2", At: at(2 * time.Second), Status: "delivered"}, false)
	record(store.ProviderReport{DeliveryID: id + 100, ProviderMessageID: "SM1", At: at(2 * time.Second), Status: "delivered"}, false)
	wantOutcomes(t, f.delivery(n.ID), heraldtype.OutcomeSent)

	record(store.ProviderReport{DeliveryID: id, ProviderMessageID: "SM1", At: at(2 * time.Second), Status: "sent"}, true)
	record(store.ProviderReport{DeliveryID: id, ProviderMessageID: "SM1", At: at(3 * time.Second), Status: "undelivered",
		Error: "twilio_21610: Attempt to send to unsubscribed recipient", SuppressReason: "twilio_21610"}, true)
	// A retried callback adds nothing.
	record(store.ProviderReport{DeliveryID: id, ProviderMessageID: "SM1", At: at(4 * time.Second), Status: "undelivered"}, true)

	d := f.delivery(n.ID)
	if d.State != heraldtype.StateSent || d.LastErrorCode != "" || d.ProviderMessageID != "SM1" {
		t.Fatalf("a provider report moved the delivery: %s %q %q", d.State, d.LastErrorCode, d.ProviderMessageID)
	}
	wantOutcomes(t, d, heraldtype.OutcomeSent, heraldtype.OutcomeProviderReport, heraldtype.OutcomeProviderReport)
	a := d.Attempts[2]
	if a.ErrorCode != "undelivered" || a.Attempt != 1 || a.ProviderMessageID != "SM1" ||
		a.Error != "twilio_21610: Attempt to send to unsubscribed recipient" {
		t.Fatalf("report row = %+v", a)
	}
	wantTime(t, "report at", a.At, at(3*time.Second))
	sps, err := f.s.ListSuppressions(f.ctx, heraldtype.ChannelSMS)
	if err != nil || len(sps) != 1 || sps[0].Address != "+15550001" || sps[0].Reason != "twilio_21610" {
		t.Fatalf("suppressions = %+v, %v", sps, err)
	}
	wantOutcomes(t, f.delivery(other.ID), heraldtype.OutcomeSent)

	// A callback may overtake the worker's outcome: a delivery whose
	// provider message id is not recorded yet takes the report.
	record(store.ProviderReport{DeliveryID: byNotification[early.ID].Delivery.ID, ProviderMessageID: "SM3", At: at(time.Minute), Status: "delivered"}, true)
	if d := f.delivery(early.ID); d.State != heraldtype.StateLeased || len(d.Attempts) != 1 ||
		d.Attempts[0].ProviderMessageID != "SM3" {
		t.Fatalf("early report: %s %+v", d.State, d.Attempts)
	}

	for _, bad := range []store.ProviderReport{
		{ProviderMessageID: "SM1", At: base(), Status: "delivered"},
		{DeliveryID: id, At: base(), Status: "delivered"},
		{DeliveryID: id, ProviderMessageID: "SM1", At: base()},
		{DeliveryID: id, ProviderMessageID: "SM1", Status: "delivered"},
	} {
		if _, err := f.s.RecordProviderReport(f.ctx, bad); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("RecordProviderReport(%+v) = %v, want invalid_argument", bad, err)
		}
	}
}
