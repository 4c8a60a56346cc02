package store

import (
	"context"
	"encoding/base64"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Interests is the part of the store that keeps who showed interest in
// what (issue 20 item 3, S3.3): the audiences of event rules. Store
// embeds it.
//
// An interest need not name a registered user — a behaviour stream may
// run ahead of registration — but InterestedUsers answers only users that
// exist, since only they can be sent to.
type Interests interface {
	// PutInterests records interests in one transaction. One already
	// recorded for (user, subject, kind) keeps the later At, and the data
	// of the record with the later At.
	PutInterests(ctx context.Context, is []heraldtype.Interest) error
	// ListInterests returns a page of one user's interests ordered by
	// subject and kind, and the cursor of the next page ("" at the end).
	ListInterests(ctx context.Context, f heraldtype.InterestFilter) ([]heraldtype.Interest, string, error)
	// InterestedUsers returns up to q.Limit registered users after q.After
	// (by id) with an interest in q.Subject of one of q.Kinds at or after
	// q.Since, each with the data of their latest such interest: one page
	// of an audience, read with an index range scan (never the whole
	// audience at once).
	InterestedUsers(ctx context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error)
	// PruneInterests deletes up to limit interests last shown before
	// cutoff and returns how many.
	PruneInterests(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// Page sizes of the interest listings.
const (
	DefaultInterestPage = 50
	MaxInterestPage     = 200
	// MaxInterestQueryPage bounds one InterestedUsers page.
	MaxInterestQueryPage = 10_000
)

// CheckInterests refuses a write both stores would refuse, with the same
// code and message: every interest has a user, a subject, a kind and a
// time.
func CheckInterests(is []heraldtype.Interest) error {
	for i, in := range is {
		if in.UserID == "" || in.Subject == "" || in.Kind == "" || in.At.IsZero() {
			return heraldtype.Errorf(heraldtype.EINVALID, "interest %d: user, subject, kind and time are required", i)
		}
	}
	return nil
}

// CheckInterestFilter checks f and returns its page size and the position
// after which the page starts (subject, kind; "" for the first page).
func CheckInterestFilter(f heraldtype.InterestFilter) (limit int, subject, kind string, err error) {
	if f.UserID == "" {
		return 0, "", "", heraldtype.FieldErrorf("user_id", "is required")
	}
	if f.Cursor != "" {
		b, derr := base64.RawURLEncoding.DecodeString(f.Cursor)
		var ok bool
		subject, kind, ok = strings.Cut(string(b), "\x00")
		if derr != nil || !ok {
			return 0, "", "", heraldtype.FieldErrorf("cursor", "is not a cursor this listing returned")
		}
	}
	if limit, err = pageSize(f.Limit, DefaultInterestPage, MaxInterestPage); err != nil {
		return 0, "", "", err
	}
	return limit, subject, kind, nil
}

// InterestPage trims interests, read in (subject, kind) order with a
// LIMIT of limit+1, to the page and returns the next page's cursor.
func InterestPage(is []heraldtype.Interest, limit int) ([]heraldtype.Interest, string) {
	return page(is, limit, func(in heraldtype.Interest) string {
		return base64.RawURLEncoding.EncodeToString([]byte(in.Subject + "\x00" + in.Kind))
	})
}

// CheckInterestQuery refuses a query without a subject or with a page
// size out of bounds.
func CheckInterestQuery(q heraldtype.InterestQuery) error {
	if q.Subject == "" {
		return heraldtype.FieldErrorf("subject", "is required")
	}
	if q.Limit < 1 || q.Limit > MaxInterestQueryPage {
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxInterestQueryPage)
	}
	return nil
}

// CheckPruneInterests refuses a prune of no rows.
func CheckPruneInterests(limit int) error { return atLeastOne("limit", limit) }

// MergeInterests keeps, of interests naming the same (user, subject,
// kind), the one with the latest time (the last of equals): what the
// stores' upsert would keep, decided before the statement, since one
// PostgreSQL INSERT … ON CONFLICT cannot update a row twice. The order of
// first appearance is kept.
func MergeInterests(is []heraldtype.Interest) []heraldtype.Interest {
	type key struct{ user, subject, kind string }
	at := make(map[key]int, len(is))
	out := make([]heraldtype.Interest, 0, len(is))
	for _, in := range is {
		k := key{in.UserID, in.Subject, in.Kind}
		if i, ok := at[k]; ok {
			if !in.At.Before(out[i].At) {
				out[i] = in
			}
			continue
		}
		at[k] = len(out)
		out = append(out, in)
	}
	return out
}
