package herald

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// A browser's Web Push subscription routed to FCM (the mistake issue 21
// item 5 is about) fails against the emulator as it does against FCM:
// INVALID_ARGUMENT naming the registration token, which deactivates the
// device (S0.3) instead of "working" in development.
func TestPipelineMisroutedWebTokenDeactivatesDevice(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	if _, err := p.client.PutUser(p.ctx, "u1", UserInput{}); err != nil {
		t.Fatal(err)
	}
	endpoint := "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bXYZ"
	if _, err := p.client.RegisterDevice(p.ctx, "u1", DeviceInput{DeviceID: "b1", Token: endpoint, Platform: "web"}); err != nil {
		t.Fatal(err)
	}
	id := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
	p.work()
	if d := p.only(id); d.State != heraldtype.StateDead || d.LastErrorCode != "INVALID_ARGUMENT" || d.Attempt != 1 {
		t.Fatalf("delivery = %s %s attempt %d, want dead INVALID_ARGUMENT after 1 attempt", d.State, d.LastErrorCode, d.Attempt)
	}
	dev, err := p.store.GetDevice(p.ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if dev.Status != heraldtype.DeviceInvalid || dev.InvalidReason != "INVALID_ARGUMENT" {
		t.Fatalf("device = %s %q, want INVALID by INVALID_ARGUMENT", dev.Status, dev.InvalidReason)
	}
	if n := len(p.em.Messages()); n != 0 {
		t.Fatalf("the emulator accepted %d messages, want none", n)
	}
}
