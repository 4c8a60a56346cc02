// Package audience resolves who a fan-out reaches (S3.3): a Source yields
// an audience's users in keyset-paginated batches, in user id order,
// never the whole audience at once, so a fan-out's cursor (the last id it
// went past) resumes it after a crash. Campaigns use the built-in sources
// here (all users; users active within a window); issue 20 adds interest,
// topic, user-list and webhook sources beside them, behind the same
// interface.
package audience

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// User is one member of an audience, with what rendering needs of it.
type User struct {
	ID       string
	Timezone string
	Locale   string
}

// Source is an audience: Next returns up to limit users whose id is
// greater than after, in id order; an empty page is the end. It must be
// deterministic for a given after, so a resumed fan-out continues exactly
// where it stopped.
type Source interface {
	Next(ctx context.Context, after string, limit int) ([]User, error)
}

// Exhaustive is a Source that answers a page shorter than asked only at
// its end (the list and interest sources): a fan-out may end with that
// page rather than read an empty one. Other sources end with an empty
// page.
type Exhaustive interface {
	Exhaustive() bool
}

// Ends reports whether a page of n users, asked for limit, is the end of
// src.
func Ends(src Source, n, limit int) bool {
	if n == 0 {
		return true
	}
	e, ok := src.(Exhaustive)
	return ok && e.Exhaustive() && n < limit
}

// Store is what the built-in sources need of the database.
type Store interface {
	AudienceUsers(ctx context.Context, q store.AudienceQuery) ([]store.AudienceUser, error)
}

// Bounds of active_within.
const (
	MinActiveWithin = time.Hour
	MaxActiveWithin = 366 * 24 * time.Hour
)

// Validate checks an audience as given by a caller: exactly one form,
// each refusal naming its field (audience.active_within, …).
func Validate(a heraldtype.Audience) error {
	switch {
	case a.All && a.ActiveWithin != 0:
		return heraldtype.FieldErrorf("audience", "give one of all and active_within")
	case a.All:
		return nil
	case a.ActiveWithin == 0:
		return heraldtype.FieldErrorf("audience", "is required: {\"all\":true} or {\"active_within\":\"168h\"}")
	case a.ActiveWithin.Std() < MinActiveWithin || a.ActiveWithin.Std() > MaxActiveWithin:
		return heraldtype.FieldErrorf("audience.active_within", "must be between %v and %v", MinActiveWithin, MaxActiveWithin)
	}
	return nil
}

// For returns the source of a, as of asOf: "active within" counts back
// from asOf, so every batch of one run (and its resumption after a crash)
// sees the same audience definition.
func For(a heraldtype.Audience, st Store, asOf time.Time) (Source, error) {
	if err := Validate(a); err != nil {
		return nil, err
	}
	if a.All {
		return users{st: st}, nil
	}
	return users{st: st, since: asOf.Add(-a.ActiveWithin.Std())}, nil
}

// users is the built-in source over the users table: every user, or
// those with a device seen at or after since.
type users struct {
	st    Store
	since time.Time
}

func (u users) Next(ctx context.Context, after string, limit int) ([]User, error) {
	page, err := u.st.AudienceUsers(ctx, store.AudienceQuery{After: after, Limit: limit, ActiveSince: u.since})
	if err != nil {
		return nil, err
	}
	out := make([]User, len(page))
	for i, p := range page {
		out[i] = User(p)
	}
	return out, nil
}
