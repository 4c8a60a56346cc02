package store

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// CheckHistoryFilter validates a history filter and returns its page size
// (default 50, at most 200). Every store calls it, so all of them accept
// the same filters.
func CheckHistoryFilter(f *heraldtype.HistoryFilter) (int, error) {
	if f.Status != "" && !f.Status.Valid() {
		return 0, heraldtype.FieldErrorf("status", "unknown status %q (PENDING, DEFERRED, SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT, FAILED)", f.Status)
	}
	return pageSize(f.Limit, 50, 200)
}

// EncodeHistoryCursor is the history cursor of every store: the last
// entry's created_at (unix microseconds) and notification id.
func EncodeHistoryCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created.UnixMicro(), 10) + ":" + id))
}

// DecodeHistoryCursor reverses EncodeHistoryCursor; a cursor it did not
// make is EINVALID.
func DecodeHistoryCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		at, id, ok := strings.Cut(string(b), ":")
		v, perr := strconv.ParseInt(at, 10, 64)
		if ok && perr == nil && id != "" {
			return time.UnixMicro(v).UTC(), id, nil
		}
	}
	return time.Time{}, "", badCursor()
}

// HistoryPage trims entries, read with a LIMIT of limit+1, to the page
// and returns the cursor of the next page ("" when this is the last).
func HistoryPage(es []heraldtype.HistoryEntry, limit int) ([]heraldtype.HistoryEntry, string) {
	return page(es, limit, func(e heraldtype.HistoryEntry) string {
		return EncodeHistoryCursor(e.CreatedAt, e.NotificationID)
	})
}

// Rows is what both drivers' result sets offer for reading (pgx.Rows,
// *sql.Rows). The caller closes them and translates the error.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}
