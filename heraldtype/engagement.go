package heraldtype

import "time"

// EngagementQuery asks for an engagement report (GET /v1/engagement).
// Every field is optional: the last seven days, everything in one row.
type EngagementQuery struct {
	// From and To bound the hours counted (an hour is in when it starts
	// at or after From, rounded down to its hour, and before To). Zero To
	// is now; zero From is seven days before To. At most 400 days apart.
	From, To time.Time
	// Interval is "" (one row per group over the range), "hour" or "day"
	// (a row per group and hour or UTC day).
	Interval string
	// GroupBy lists the dimensions of the rows: "type", "channel", "rule",
	// "campaign"; none sums everything into one row (per interval).
	GroupBy []string
	// Filters ("" for any).
	Type     string
	Channel  Channel
	Rule     string
	Campaign string
}

// Engagement is the answer of the engagement report (issue 35 item 3,
// GET /v1/engagement): per group, how many deliveries were sent and how
// many of them the user's side reported delivered, opened, clicked, …,
// with the rates, over a time range, from counters kept with each send
// and receipt — never a scan of the deliveries.
type Engagement struct {
	// From and To are the range counted: the hours starting at or after
	// From (rounded down to its hour) and before To.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Interval is "hour" or "day" (UTC) when the rows are a time series,
	// "" when each group is one row over the whole range.
	Interval string `json:"interval,omitempty"`
	// GroupBy are the dimensions of the rows: type, channel, rule,
	// campaign.
	GroupBy []string `json:"group_by"`
	// Rows, in order of start, then type, channel, rule, campaign.
	Rows []EngagementRow `json:"rows"`
	// Total sums every row.
	Total EngagementRow `json:"total"`
}

// EngagementRow is one group of Engagement: its dimensions (only those
// grouped by are set) and its counts.
type EngagementRow struct {
	// Start is the row's hour or day, when the report has an Interval.
	Start    time.Time `json:"start,omitzero"`
	Type     string    `json:"type,omitempty"`
	Channel  Channel   `json:"channel,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Campaign string    `json:"campaign,omitempty"`
	EngagementCounts
}

// EngagementCounts are the counts of a group: deliveries sent, and
// receipts recorded by event (each delivery's event at most once).
type EngagementCounts struct {
	Sent      int64 `json:"sent"`
	Delivered int64 `json:"delivered"`
	Opened    int64 `json:"opened"`
	Clicked   int64 `json:"clicked"`
	Dismissed int64 `json:"dismissed"`
	// Seen, Read and Archived are the in-app inbox's read-state.
	Seen     int64 `json:"seen"`
	Read     int64 `json:"read"`
	Archived int64 `json:"archived"`
	// The rates of the sent deliveries (0 to 1; absent when none was
	// sent): delivered, opened (an inbox item read counts as opened) and
	// clicked.
	DeliveryRate *float64 `json:"delivery_rate,omitempty"`
	OpenRate     *float64 `json:"open_rate,omitempty"`
	ClickRate    *float64 `json:"click_rate,omitempty"`
}

// Add counts n of event ("sent" or a ReceiptEvent) into c; an unknown
// event is ignored.
func (c *EngagementCounts) Add(event string, n int64) {
	switch event {
	case "sent":
		c.Sent += n
	case string(ReceiptDelivered):
		c.Delivered += n
	case string(ReceiptOpened):
		c.Opened += n
	case string(ReceiptClicked):
		c.Clicked += n
	case string(ReceiptDismissed):
		c.Dismissed += n
	case string(ReceiptSeen):
		c.Seen += n
	case string(ReceiptRead):
		c.Read += n
	case string(ReceiptArchived):
		c.Archived += n
	}
}

// Plus is the sum of c and o, without rates.
func (c EngagementCounts) Plus(o EngagementCounts) EngagementCounts {
	return EngagementCounts{Sent: c.Sent + o.Sent, Delivered: c.Delivered + o.Delivered, Opened: c.Opened + o.Opened,
		Clicked: c.Clicked + o.Clicked, Dismissed: c.Dismissed + o.Dismissed, Seen: c.Seen + o.Seen, Read: c.Read + o.Read,
		Archived: c.Archived + o.Archived}
}

// SetRates sets the rates of c from its counts: none when nothing was
// sent, and never above 1 (a receipt of a delivery sent before the range
// counts in the range it arrived in).
func (c *EngagementCounts) SetRates() {
	c.DeliveryRate, c.OpenRate, c.ClickRate = nil, nil, nil
	if c.Sent == 0 {
		return
	}
	rate := func(n int64) *float64 {
		r := min(float64(n)/float64(c.Sent), 1)
		return &r
	}
	c.DeliveryRate, c.OpenRate, c.ClickRate = rate(c.Delivered), rate(c.Opened+c.Read), rate(c.Clicked)
}
