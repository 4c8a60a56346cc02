package audience

import (
	"context"
	"slices"

	"github.com/heraldhq/herald/heraldtype"
)

// InterestStore is what the interest source needs of the database.
type InterestStore interface {
	InterestedUsers(ctx context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error)
}

// Interested is the audience of the users with an interest in q.Subject
// of one of q.Kinds since q.Since (issue 20 item 3, S3.3), read a page
// of the interests' primary key at a time. keep, when set, filters each
// user by the data of their latest matching interest (a watcher's own
// target price); a page the filter empties is skipped, never taken for
// the end.
func Interested(st InterestStore, q heraldtype.InterestQuery, keep func(data map[string]string) bool) Source {
	return interested{st: st, q: q, keep: keep}
}

type interested struct {
	st   InterestStore
	q    heraldtype.InterestQuery
	keep func(map[string]string) bool
}

func (s interested) Next(ctx context.Context, after string, limit int) ([]User, error) {
	q := s.q
	q.After, q.Limit = after, limit
	out := make([]User, 0, limit)
	for {
		page, err := s.st.InterestedUsers(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, u := range page {
			if s.keep == nil || s.keep(u.Data) {
				out = append(out, User{ID: u.UserID})
			}
		}
		// A page is filled up past the users the filter left out, so a
		// short one is the end (Exhaustive).
		if len(page) < q.Limit || len(out) == limit {
			return out, nil
		}
		q.After, q.Limit = page[len(page)-1].UserID, limit-len(out)
	}
}

// Exhaustive: a page shorter than asked is the end of the audience.
func (interested) Exhaustive() bool { return true }

// List is the audience of an explicit list of user ids, in id order
// (duplicates once).
func List(ids []string) Source {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	return list(slices.Compact(sorted))
}

type list []string

// Exhaustive: a page shorter than asked is the end of the list.
func (list) Exhaustive() bool { return true }

func (l list) Next(_ context.Context, after string, limit int) ([]User, error) {
	i, _ := slices.BinarySearch(l, after)
	if i < len(l) && l[i] == after {
		i++
	}
	end := min(i+limit, len(l))
	out := make([]User, 0, end-i)
	for _, id := range l[i:end] {
		out = append(out, User{ID: id})
	}
	return out, nil
}
