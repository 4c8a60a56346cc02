package console

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// overviewChannels are the overview table's columns, in order.
var overviewChannels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp}

// overviewStates are its rows: the queue's states.
var overviewStates = []heraldtype.DeliveryState{heraldtype.StatePending, heraldtype.StateLeased}

// overviewData is the overview page's.
type overviewData struct {
	O         heraldtype.Overview
	Channels  []heraldtype.Channel
	Rows      []queueRow
	Pending   bool
	OldestAge time.Duration
	// ReminderLag is how late the reminder scheduler is (0: on time).
	ReminderLag time.Duration
	Kafka       kafkaLag
	Chart       chart
}

// queueRow is one state's counts by channel.
type queueRow struct {
	State heraldtype.DeliveryState
	Cells []queueCell
}

type queueCell struct {
	Channel heraldtype.Channel
	Count   int64
}

// kafkaLag is the Kafka intake's lag as the overview shows it.
type kafkaLag struct {
	Known bool
	Lag   int64
	Note  string
}

// overview shows the pipeline at a glance; ?fragment=overview answers
// only the live region, for the refresh script.
func (c *Console) overview(w http.ResponseWriter, r *http.Request, s Session) error {
	o, err := c.client.Overview(r.Context())
	if err != nil {
		return err
	}
	d := overviewData{O: o, Channels: overviewChannels, Chart: newChart(o.Minutes), Kafka: c.kafkaLag(r.Context())}
	for _, st := range overviewStates {
		row := queueRow{State: st}
		for _, ch := range overviewChannels {
			var n int64
			for _, q := range o.Queue {
				if q.State == st && q.Channel == ch {
					n = q.Count
				}
			}
			row.Cells = append(row.Cells, queueCell{Channel: ch, Count: n})
		}
		d.Rows = append(d.Rows, row)
	}
	if !o.OldestPending.IsZero() {
		d.Pending, d.OldestAge = true, o.At.Sub(o.OldestPending)
	}
	if !o.ReminderDue.IsZero() {
		d.ReminderLag = o.At.Sub(o.ReminderDue)
	}
	p := page{Title: "Overview", Session: s, Data: d}
	switch f := r.URL.Query().Get("fragment"); f {
	case "":
		c.render(w, r, http.StatusOK, "overview", p)
	case "overview":
		c.renderFragment(w, r, "overview", "live", p)
	default:
		return heraldtype.FieldErrorf("fragment", "no region %q on this page", f)
	}
	return nil
}

// kafkaLag asks Config.KafkaLag, when the process runs the Kafka intake.
func (c *Console) kafkaLag(ctx context.Context) kafkaLag {
	if c.kafka == nil {
		return kafkaLag{Note: "This instance does not read Kafka."}
	}
	lag, ok := c.kafka(ctx)
	if !ok {
		return kafkaLag{Note: "Not known yet: the intake holds no partition."}
	}
	return kafkaLag{Known: true, Lag: lag}
}

// countText writes a capped count: "10,000+" past the cap.
func countText(c heraldtype.CappedCount) string {
	if c.Capped {
		return fmt.Sprintf("%s+", count(c.Count))
	}
	return count(c.Count)
}
