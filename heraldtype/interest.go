package heraldtype

import "time"

// Interest says that a user showed an interest of some kind in a subject
// — viewed, clicked, put in the cart, watched a product — and when last
// (issue 20 item 3, S3.3). A rule's audience is the users with given
// kinds of interest in the event's subject within a window: "everyone who
// looked at product 42 this week".
type Interest struct {
	UserID string `json:"user_id"`
	// Subject is what the interest is in: "product:42".
	Subject string `json:"subject"`
	// Kind is how: VIEW, CLICK, ADD_TO_CART, WATCH, or any name.
	Kind string `json:"kind"`
	// At is the latest time the user showed it; recording an older one
	// keeps the later time.
	At time.Time `json:"at"`
	// Data travels with the interest, e.g. a watcher's own target price
	// ({"target_price":"8000"}); the latest record's data wins.
	Data map[string]string `json:"data,omitempty"`
}

// InterestFilter selects a page of interests (GET
// /v1/users/{id}/interests). UserID is required.
type InterestFilter struct {
	UserID string
	// Subject, when set, selects one subject's interests.
	Subject string
	Cursor  string
	// Limit defaults to 50 and is capped at 200.
	Limit int
}

// InterestQuery selects the users with an interest in a subject: the
// audience of a rule (S3.3), read in pages ordered by user id.
type InterestQuery struct {
	Subject string
	// Kinds the interest must be one of; empty: any.
	Kinds []string
	// Since: only interests at or after it; zero: any time.
	Since time.Time
	// After is the last user id of the previous page ("" for the first).
	After string
	// Limit is the page size.
	Limit int
}

// Interested is one user of an InterestQuery's answer, with the data of
// their latest matching interest (a watcher's target price).
type Interested struct {
	UserID string
	Data   map[string]string
}
