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
		return 0, heraldtype.FieldErrorf("status", "unknown status %q (SENT, FAILED, RATE_LIMITED, USER_OPTED_OUT, DEFERRED, PENDING)", f.Status)
	}
	switch {
	case f.Limit < 0:
		return 0, heraldtype.FieldErrorf("limit", "must not be negative")
	case f.Limit == 0:
		return 50, nil
	}
	return min(f.Limit, 200), nil
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
	return time.Time{}, "", heraldtype.FieldErrorf("cursor", "is not a cursor returned by a previous page")
}
