package heraldtype

import "time"

// Rule turns events into notifications (issue 20 item 2, S3.2, S3.4): the
// events of a source with a name pass a detector ("the price dropped at
// least 10 %"), and the rule's audience ("everyone who viewed the product
// this week") gets the rule's notification, rendered from the event's
// fields.
type Rule struct {
	// Name is the rule's key (PUT /v1/rules/{name}).
	Name     string       `json:"name"`
	Source   RuleSource   `json:"source,omitzero"`
	When     RuleWhen     `json:"when"`
	Audience RuleAudience `json:"audience"`
	Notify   RuleNotify   `json:"notify"`
	// Disabled rules are kept but match no event.
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RuleSource says where a rule's events come from: a Kafka topic, or
// (empty) POST /v1/events and Client.Track.
type RuleSource struct {
	KafkaTopic string `json:"kafka_topic,omitempty"`
}

// RuleWhen selects the events a rule acts on: their name, and the
// detector that must fire.
type RuleWhen struct {
	// Event is the event's name (PRICE_CHANGE, STOCK_CHANGE, …).
	Event  string   `json:"event"`
	Detect Detector `json:"detect,omitzero"`
}

// Detector decides whether an event is worth a notification. Exactly one
// kind is set; none at all is Always.
type Detector struct {
	// PriceDropPct fires when the price fell by at least this percentage
	// (S3.2: 10): (previous − current) / previous × 100.
	PriceDropPct float64 `json:"price_drop_pct,omitempty"`
	// PriceDropAbs fires when the price fell by at least this amount.
	PriceDropAbs float64 `json:"price_drop_abs,omitempty"`
	// Restock fires when the stock goes from 0 to at least Restock.Min.
	Restock *RestockDetector `json:"restock,omitempty"`
	// Changed fires when any of these fields differs from the previous
	// event of the same subject (the first event of a subject is no
	// change).
	Changed []string `json:"changed,omitempty"`
	// Always fires on every event.
	Always bool `json:"always,omitempty"`
	// Fields names the event fields the price and stock detectors read,
	// when they are not the defaults (previous_price, current_price,
	// previous_stock, current_stock; or the seed's camelCase names).
	Fields DetectorFields `json:"fields,omitzero"`
}

// RestockDetector is the restock detector: stock 0 → at least Min
// (default 1). Hysteresis: once it fired for a subject it fires again
// only after the stock has been 0 for RearmAfter (default 1 h), so a
// stock flapping between 0 and 1 does not notify on every flap.
type RestockDetector struct {
	// Min is a pointer so that an explicit 0 is told from an absent
	// minimum: 0 is refused like any number below 1, absent is 1 (issue
	// 30 item 5).
	Min        *int     `json:"min,omitempty"`
	RearmAfter Duration `json:"rearm_after,omitempty"`
}

// DetectorFields names the event fields of the price and stock
// detectors.
type DetectorFields struct {
	PreviousPrice string `json:"previous_price,omitempty"`
	CurrentPrice  string `json:"current_price,omitempty"`
	PreviousStock string `json:"previous_stock,omitempty"`
	CurrentStock  string `json:"current_stock,omitempty"`
}

// RuleAudience says who gets a rule's notification (S3.3): exactly one of
// the users with an interest in the event's subject, the subscribers of a
// topic, an explicit list, the event's own user, an audience source the
// embedding program registered, or an operator's audience webhook — at
// most Limit of them.
type RuleAudience struct {
	Interest *InterestAudience `json:"interest,omitempty"`
	// Topic is the users subscribed to a topic: an interest in the fixed
	// subject "topic:" + Topic.Name, whatever the event's subject.
	Topic *TopicAudience `json:"topic,omitempty"`
	// UserIDs is an explicit list of recipients.
	UserIDs []string `json:"user_ids,omitempty"`
	// EventUser: the event's user_id.
	EventUser bool `json:"event_user,omitempty"`
	// Source names an audience source registered on the Client
	// (herald.Config.AudienceSources): a deployment's own Go code that
	// pages its users for the event.
	Source string `json:"source,omitempty"`
	// Webhook is an operator's HTTP endpoint that pages the users for the
	// event.
	Webhook *WebhookAudience `json:"webhook,omitempty"`
	// Limit caps the audience (default 100,000).
	Limit int `json:"limit,omitempty"`
}

// TopicAudience is the users subscribed to a topic: those with an
// interest in the subject "topic:" + Name (POST /v1/interests
// {"subject":"topic:deals","kind":"SUBSCRIBE"}), of one of Kinds (any kind
// when empty), shown within Within (any time when zero).
type TopicAudience struct {
	Name   string   `json:"name"`
	Kinds  []string `json:"kinds,omitempty"`
	Within Duration `json:"within,omitempty"`
}

// TopicSubject is the interest subject of a topic's subscribers.
func TopicSubject(topic string) string { return "topic:" + topic }

// WebhookAudience is an audience an operator's endpoint resolves: Herald
// POSTs it an AudienceQuery (the rule, the event, a keyset cursor) a page
// at a time, and it answers {"users":[…]}, the next user ids in ascending
// order (an empty list at the end).
type WebhookAudience struct {
	URL string `json:"url"`
	// Timeout bounds one call (default rules.webhook_timeout, at most
	// rules.webhook_max_timeout).
	Timeout Duration `json:"timeout,omitempty"`
}

// AudienceQuery asks an audience source (a Go herald.AudienceSource or a
// webhook, which gets it as its JSON body) for one page of a rule's
// audience for one event: up to Limit user ids greater than After, in
// ascending byte order. The same query must always answer the same page,
// so a fan-out resumed after a crash continues where it stopped.
type AudienceQuery struct {
	Rule string `json:"rule"`
	// EventID, Event, Subject, UserID and Data are the event's.
	EventID string            `json:"event_id"`
	Event   string            `json:"event"`
	Subject string            `json:"subject,omitempty"`
	UserID  string            `json:"user_id,omitempty"`
	Data    map[string]string `json:"data,omitempty"`
	// After is the last user id of the previous page ("" for the first).
	After string `json:"after"`
	Limit int    `json:"limit"`
}

// InterestAudience is the users with one of Kinds of interest in the
// event's subject within Within (S3.3: restock → cart users).
type InterestAudience struct {
	Kinds []string `json:"kinds,omitempty"`
	// Within bounds how long ago the interest was last shown; zero: any
	// time within the interest retention.
	Within Duration `json:"within,omitempty"`
	// AtMost keeps only the watchers whose own price is met: an interest
	// whose data field AtMost.InterestField (e.g. target_price) is below
	// the event's AtMost.EventField (e.g. current_price) is left out; an
	// interest without the field is kept.
	AtMost *AudienceBound `json:"at_most,omitempty"`
}

// AudienceBound compares an event field with an interest's data field.
type AudienceBound struct {
	EventField    string `json:"event_field"`
	InterestField string `json:"interest_field"`
}

// RuleNotify is the notification a rule sends: Title, Body and each Data
// value are Go text/template templates over the event's fields (and the
// detector's, such as drop_pct); a field the template names that the
// event lacks is an error, never "<no value>".
type RuleNotify struct {
	Type     string            `json:"type"`
	Title    string            `json:"title,omitempty"`
	Body     string            `json:"body,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	Channels []Channel         `json:"channels,omitempty"`
	Priority Priority          `json:"priority,omitempty"`
}
