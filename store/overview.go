package store

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// DeliveryMinute is one row of the delivery rollup: how many attempts of
// one channel came to one outcome with one error code in one minute, as
// one instance counted them.
type DeliveryMinute struct {
	Minute    time.Time
	Channel   heraldtype.Channel
	Outcome   RollupOutcome
	ErrorCode string
	Count     int64
}

// RollupOutcome is what the rollup counts an attempt as.
type RollupOutcome string

const (
	// RollupSent: the provider accepted it, or the inbox row was written.
	RollupSent RollupOutcome = "sent"
	// RollupFailed: the attempt failed, whether it is retried or dead.
	RollupFailed RollupOutcome = "failed"
)

// OverviewParams bounds Store.Overview.
type OverviewParams struct {
	// Now decides what is due (the oldest pending, the reminder lag).
	Now time.Time
	// Since is the first minute of the rollup read.
	Since time.Time
	// Cap bounds every count (heraldtype.OverviewCountCap).
	Cap int
	// MaxCodes bounds the failures by code, most first.
	MaxCodes int
}

// MergeDeliveryMinutes sums rows of the same minute, channel, outcome and
// code, so a store can add them in one statement (an upsert may touch a
// row once). Minutes are truncated to the minute, in UTC.
func MergeDeliveryMinutes(rows []DeliveryMinute) []DeliveryMinute {
	type key struct {
		minute  int64
		channel heraldtype.Channel
		outcome RollupOutcome
		code    string
	}
	at := map[key]int{}
	out := make([]DeliveryMinute, 0, len(rows))
	for _, r := range rows {
		r.Minute = r.Minute.UTC().Truncate(time.Minute)
		k := key{r.Minute.Unix(), r.Channel, r.Outcome, r.ErrorCode}
		if i, ok := at[k]; ok {
			out[i].Count += r.Count
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	return out
}
