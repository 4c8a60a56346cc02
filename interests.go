package herald

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Interest is a user's interest of some kind in a subject (issue 20 item
// 3, S3.3): the raw material of event rules' audiences.
type Interest = heraldtype.Interest

// InterestFilter selects a page of a user's interests.
type InterestFilter = heraldtype.InterestFilter

// InterestInput is one interest as the API takes it: the body of POST
// /v1/interests (or an entry of its "interests" list), a record of a
// behaviour topic, or what a Go program records.
type InterestInput struct {
	UserID  string `json:"user_id"`
	Subject string `json:"subject"`
	// Kind is VIEW, CLICK, ADD_TO_CART, WATCH or any name (letters,
	// digits, '_', '.', '-').
	Kind string `json:"kind"`
	// At is when the user showed it; nil means now. An interest time may
	// not lie ahead of now by more than MaxInterestClockSkew.
	At *time.Time `json:"at,omitempty"`
	// Data travels with it, e.g. a watcher's {"target_price":"8000"}.
	Data map[string]string `json:"data,omitempty"`
}

// InterestPage is one page of a user's interests.
type InterestPage struct {
	Interests  []Interest `json:"interests"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

const (
	// MaxInterestBatch bounds the interests of one RecordInterests call.
	MaxInterestBatch = 1000
	// MaxInterestKindLength bounds an interest's kind.
	MaxInterestKindLength = 64
	// MaxInterestClockSkew is how far ahead of Herald's clock an interest
	// time may be (a producer's clock running fast); further is refused,
	// since it would keep the user in every time window until then.
	MaxInterestClockSkew = 5 * time.Minute
)

var interestKindPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// RecordInterests records interests in one transaction and returns how
// many it recorded. One of a (user, subject, kind) already recorded keeps
// the later time and that record's data, so replaying a behaviour stream
// changes nothing. The users need not be registered yet; audiences only
// ever include registered users.
func (c *Client) RecordInterests(ctx context.Context, in []InterestInput) (int, error) {
	if len(in) == 0 {
		return 0, heraldtype.FieldErrorf("interests", "must not be empty")
	}
	if len(in) > MaxInterestBatch {
		return 0, heraldtype.FieldErrorf("interests", "has %d entries; the limit is %d", len(in), MaxInterestBatch)
	}
	now := c.now().UTC()
	is := make([]Interest, len(in))
	for i, x := range in {
		prefix := ""
		if len(in) > 1 {
			prefix = fmt.Sprintf("interests[%d].", i)
		}
		it, err := x.interest(now)
		if err != nil {
			return 0, prefixField(prefix, err)
		}
		is[i] = it
	}
	if err := c.store.PutInterests(ctx, is); err != nil {
		return 0, err
	}
	return len(is), nil
}

// interest validates x and makes the stored interest, at now when x has
// no time.
func (x InterestInput) interest(now time.Time) (Interest, error) {
	if err := validID("user_id", x.UserID); err != nil {
		return Interest{}, err
	}
	if x.Subject == "" {
		return Interest{}, heraldtype.FieldErrorf("subject", "is required")
	}
	if err := validIdentifierText("subject", x.Subject, MaxIDLength); err != nil {
		return Interest{}, err
	}
	if x.Kind == "" {
		return Interest{}, heraldtype.FieldErrorf("kind", "is required")
	}
	if len(x.Kind) > MaxInterestKindLength || !interestKindPattern.MatchString(x.Kind) {
		return Interest{}, heraldtype.FieldErrorf("kind", "must be 1-%d characters of letters, digits, '_', '.', '-', starting with a letter or digit", MaxInterestKindLength)
	}
	at := now
	if x.At != nil {
		at = x.At.UTC()
		if at.After(now.Add(MaxInterestClockSkew)) {
			return Interest{}, heraldtype.FieldErrorf("at", "is %s ahead of now; an interest cannot lie in the future", at.Sub(now).Round(time.Second))
		}
		if at.Year() < 1970 {
			return Interest{}, heraldtype.FieldErrorf("at", "must be after 1970")
		}
	}
	if err := validData(x.Data, false); err != nil {
		return Interest{}, err
	}
	return Interest{UserID: x.UserID, Subject: x.Subject, Kind: x.Kind, At: at, Data: x.Data}, nil
}

// ListInterests returns a page of a user's interests, by subject and kind.
func (c *Client) ListInterests(ctx context.Context, f InterestFilter) (InterestPage, error) {
	if err := validID("user_id", f.UserID); err != nil {
		return InterestPage{}, err
	}
	is, next, err := c.store.ListInterests(ctx, f)
	if err != nil {
		return InterestPage{}, err
	}
	return InterestPage{Interests: is, NextCursor: next}, nil
}

// prefixField names a field error's field inside a list ("interests[3]."
// + "kind"); other errors pass unchanged.
func prefixField(prefix string, err error) error {
	var he *heraldtype.Error
	if prefix == "" || !errors.As(err, &he) || he.Field == "" {
		return err
	}
	out := *he
	out.Field = prefix + he.Field
	out.Message = prefix + he.Message // FieldErrorf's message starts with the field
	return &out
}
