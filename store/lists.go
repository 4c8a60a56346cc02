package store

import (
	"encoding/base64"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// The paged lists every store serves: their filter checks, page sizes,
// cursors and the trim of a page read one row long, decided here once so
// that every store accepts the same filters and pages alike. The stores
// keep only their SQL.

// Page sizes of the lists (the filters' Limit: 0 is the default, larger
// is capped) and the bound of InboxSince.
const (
	DefaultDeliveryPage = 50
	MaxDeliveryPage     = 1000
	DefaultInboxPage    = 50
	MaxInboxPage        = 200
	MaxInboxSince       = 1000
)

// CheckDeliveryFilter validates the filter of ListDeliveries and returns
// its page size and the id the page starts below (0 for the first page).
func CheckDeliveryFilter(f heraldtype.DeliveryFilter) (limit int, below int64, err error) {
	if f.State != "" && !f.State.Valid() {
		return 0, 0, heraldtype.FieldErrorf("state", "unknown state %q", f.State)
	}
	if below, err = decodeCursor(f.Cursor); err != nil {
		return 0, 0, err
	}
	if limit, err = pageSize(f.Limit, DefaultDeliveryPage, MaxDeliveryPage); err != nil {
		return 0, 0, err
	}
	return limit, below, nil
}

// CheckInboxFilter validates the filter of ListInbox and returns its page
// size and the id the page starts below (0 for the first page).
func CheckInboxFilter(f heraldtype.InboxFilter) (limit int, below int64, err error) {
	if limit, err = pageSize(f.Limit, DefaultInboxPage, MaxInboxPage); err != nil {
		return 0, 0, err
	}
	if below, err = decodeCursor(f.Cursor); err != nil {
		return 0, 0, err
	}
	return limit, below, nil
}

// CheckInboxSince validates the arguments of InboxSince.
func CheckInboxSince(afterID int64, limit int) error {
	if afterID < 0 {
		return heraldtype.FieldErrorf("after_id", "must not be negative")
	}
	if limit < 1 || limit > MaxInboxSince {
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxInboxSince)
	}
	return nil
}

// DeliveryPage trims deliveries, read newest first with a LIMIT of
// limit+1, to the page and returns the cursor of the next page ("" when
// this is the last).
func DeliveryPage(ds []heraldtype.Delivery, limit int) ([]heraldtype.Delivery, string) {
	return page(ds, limit, func(d heraldtype.Delivery) string { return encodeCursor(d.ID) })
}

// InboxPage is DeliveryPage for inbox items.
func InboxPage(items []heraldtype.InboxItem, limit int) ([]heraldtype.InboxItem, string) {
	return page(items, limit, func(it heraldtype.InboxItem) string { return encodeCursor(it.ID) })
}

// page trims rows, read with a LIMIT of limit+1, to limit and returns the
// cursor of the last row kept when a row was left over.
func page[T any](rows []T, limit int, cursor func(last T) string) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	return rows, cursor(rows[limit-1])
}

// pageSize is a list filter's page size: 0 asks for def, more than max
// gets max, a negative limit is EINVALID.
func pageSize(limit, def, max int) (int, error) {
	switch {
	case limit < 0:
		return 0, heraldtype.FieldErrorf("limit", "must not be negative")
	case limit == 0:
		return def, nil
	}
	return min(limit, max), nil
}

// encodeCursor is the cursor of the lists keyed by id: the page's last
// id, base64-encoded to keep it opaque.
func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

// decodeCursor reverses encodeCursor; "" (the first page) is 0, and a
// cursor it did not make is EINVALID.
func decodeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		id, perr := strconv.ParseInt(string(b), 10, 64)
		if perr == nil && id > 0 {
			return id, nil
		}
	}
	return 0, badCursor()
}

func badCursor() error {
	return heraldtype.FieldErrorf("cursor", "is not a cursor returned by a previous page")
}
