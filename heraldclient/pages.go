package heraldclient

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// walk yields every item of every page, from the page at cursor on:
// fetch reads one page and returns its items and the next page's cursor
// ("" on the last page). An error is yielded once, with the zero item,
// and ends the walk; so does the caller's break.
func walk[T any](ctx context.Context, cursor string, fetch func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" || next == cursor {
				return
			}
			cursor = next
		}
	}
}

// query builds a list's query string: the non-empty values, the times
// that are set (RFC 3339), and limit when positive.
type query url.Values

func (q query) str(name, v string) query {
	if v != "" {
		url.Values(q).Set(name, v)
	}
	return q
}

func (q query) time(name string, t time.Time) query {
	if !t.IsZero() {
		url.Values(q).Set(name, t.Format(time.RFC3339Nano))
	}
	return q
}

func (q query) limit(n int) query {
	if n > 0 {
		url.Values(q).Set("limit", strconv.Itoa(n))
	}
	return q
}

func (q query) flag(name string, b bool) query {
	if b {
		url.Values(q).Set(name, "true")
	}
	return q
}

func newQuery() query { return query(url.Values{}) }
