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

// DefaultHistoryScan is how many notifications one page of the history
// with a status filter examines at most when the caller gives no bound
// (herald.Limits.HistoryScan, the history_scan key).
const DefaultHistoryScan = 2000

// HistoryChunk reads the notifications of a filter without its status,
// newest first, from just past cursor ("": from the newest): at most n+1
// of them, each with its status and reason, without its delivery counts.
// It is the store's page query without a status (its notifications taken
// first, then summed up), so a chunk costs what a page does.
type HistoryChunk func(cursor string, n int) ([]heraldtype.HistoryEntry, error)

// ListHistory is one page of the history f selects, for a store that
// reads the newest n+1 notifications of a filter without a status with
// chunk: without a status the page is one chunk; with one, ScanHistory
// walks chunks of the filter and keeps the notifications of the status,
// examining at most scan of them.
func ListHistory(f heraldtype.HistoryFilter, scan int,
	chunk func(f heraldtype.HistoryFilter, n int) ([]heraldtype.HistoryEntry, error)) ([]heraldtype.HistoryEntry, string, error) {
	limit, err := CheckHistoryFilter(&f)
	if err != nil {
		return nil, "", err
	}
	if f.Status == "" {
		es, err := chunk(f, limit)
		if err != nil {
			return nil, "", err
		}
		out, next := HistoryPage(es, limit)
		return out, next, nil
	}
	return ScanHistory(f.Status, f.Cursor, limit, scan, func(cursor string, n int) ([]heraldtype.HistoryEntry, error) {
		g := f
		g.Status, g.Cursor = "", cursor
		return chunk(g, n)
	})
}

// ScanHistory is the page of a history filter with a status (issue 34
// item 3). A notification's status is derived from all its deliveries,
// so no index finds the notifications of one status: grouping every
// notification of the filter before the limit took a page seconds with
// 10 million of them. Instead the filter's notifications are walked newest
// first in keyset chunks read by chunk (max(4×limit, 200) at a time),
// their statuses computed for just that chunk and the matches kept, until
// the page is full or scan notifications have been examined.
//
// When the bound stops the walk the page is what was found — fewer than
// limit entries, possibly none — and the next cursor points just past the
// last notification examined, so the next page goes on where this walk
// stopped; nothing is skipped or repeated. When the notifications run
// out there is no cursor. The cursor is the one HistoryPage makes.
func ScanHistory(status heraldtype.HistoryStatus, cursor string, limit, scan int, chunk HistoryChunk) ([]heraldtype.HistoryEntry, string, error) {
	if scan <= 0 {
		scan = DefaultHistoryScan
	}
	size := max(4*limit, 200)
	var out []heraldtype.HistoryEntry
	for examined := 0; examined < scan; {
		n := min(size, scan-examined)
		es, err := chunk(cursor, n)
		if err != nil {
			return nil, "", err
		}
		more := len(es) > n
		if more {
			es = es[:n]
		}
		for _, e := range es {
			if e.Status != status {
				continue
			}
			out = append(out, e)
			if len(out) > limit {
				// One match past the page: there is a next page.
				out, next := HistoryPage(out, limit)
				return out, next, nil
			}
		}
		if !more {
			return out, "", nil // the notifications ran out
		}
		examined += n
		last := es[n-1]
		cursor = EncodeHistoryCursor(last.CreatedAt, last.NotificationID)
	}
	// The bound stopped the walk: go on after the last one examined.
	return out, cursor, nil
}

// Rows is what both drivers' result sets offer for reading (pgx.Rows,
// *sql.Rows). The caller closes them and translates the error.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}
