package herald

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 35 item 1: a receipt's time is clamped to when Herald receives it
// (a device clock ahead); the batch is bounded by Limits.MaxReceipts;
// unknown and another user's messages are counted not_found, by event,
// alike.
func TestReceiptsClampCountAndBound(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) { c.Limits.MaxReceipts = 3 })
	p.user("u1", "Asia/Seoul", "tok-1")
	p.user("u2", "Asia/Seoul", "tok-2")
	mine := p.only(p.enqueue(Request{UserID: "u1"}).Notifications[0].ID)
	theirs := p.only(p.enqueue(Request{UserID: "u2"}).Notifications[0].ID)
	p.clock.Advance(time.Minute)
	now := p.clock.Now()

	res, err := p.client.RecordOwnReceipts(p.ctx, "u1", []heraldtype.Receipt{
		{MessageID: mine.IdempotencyKey(), Event: heraldtype.ReceiptOpened, At: now.Add(time.Hour)},
		{MessageID: theirs.IdempotencyKey(), Event: heraldtype.ReceiptOpened},
		{MessageID: "01JQ8M5ZK3W6T1X0S9V4R2B7CD.1", Event: heraldtype.ReceiptOpened},
	})
	if err != nil || res.Recorded != 1 || res.NotFound != 2 {
		t.Fatalf("RecordOwnReceipts = %+v, %v", res, err)
	}
	d, err := p.client.GetDelivery(p.ctx, mine.ID)
	if err != nil || len(d.Receipts) != 1 || d.Receipts[0].Event != heraldtype.ReceiptOpened || !d.Receipts[0].At.Equal(now) {
		t.Fatalf("the receipt from the future: %+v, %v (now %v)", d.Receipts, err, now)
	}
	for result, want := range map[heraldtype.ReceiptResult]float64{heraldtype.ReceiptRecorded: 1, heraldtype.ReceiptNotFound: 2, heraldtype.ReceiptDuplicate: 0} {
		if got := counterValue(t, p.client.metrics.Receipts.WithLabelValues("opened", string(result))); got != want {
			t.Errorf("herald_receipts_total{event=opened,result=%s} = %v, want %v", result, got, want)
		}
	}
	four := make([]heraldtype.Receipt, 4)
	for i := range four {
		four[i] = heraldtype.Receipt{MessageID: mine.IdempotencyKey(), Event: heraldtype.ReceiptDelivered}
	}
	if _, err := p.client.RecordReceipts(p.ctx, four); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a batch over MaxReceipts: %v", err)
	}
	if res, err := p.client.RecordReceipts(p.ctx, four[:3]); err != nil || res.Recorded != 1 || res.Duplicate != 2 {
		t.Fatalf("a batch of MaxReceipts: %+v, %v", res, err)
	}
	if _, err := p.client.RecordOwnReceipts(p.ctx, "", four[:1]); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("no user: %v", err)
	}
	if _, err := NewClient(Config{Store: p.store, Limits: Limits{MaxReceipts: 10001}}); err == nil {
		t.Fatal("MaxReceipts over the store's bound was accepted")
	}
}
