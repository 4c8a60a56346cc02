package bench

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram records durations with about 1.6 % resolution in constant
// memory, lock-free: values are bucketed by their top seven significant
// bits (HdrHistogram's idea), so a run of any length costs the same 14 KB
// and the load generator does not inflate the memory it measures.
type histogram struct {
	counts [subBuckets + maxShift*subBuckets/2]atomic.Uint64
	total  atomic.Uint64
	max    atomic.Int64 // microseconds
}

const (
	subBuckets = 128 // values below this are exact (µs)
	maxShift   = 40  // up to 2^47 µs, far beyond any run
)

// index maps a value in microseconds to its bucket.
func index(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	shift := bits.Len64(us) - 7 // us>>shift is in [64, 128)
	return subBuckets + (shift-1)*subBuckets/2 + int(us>>shift) - subBuckets/2
}

// upper is the largest value (µs) of bucket i: a percentile is reported as
// its bucket's upper bound, so it never understates.
func upper(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	j := i - subBuckets
	shift := j/(subBuckets/2) + 1
	m := uint64(j%(subBuckets/2) + subBuckets/2)
	return (m+1)<<shift - 1
}

// record adds one observation; negative durations (clock skew between the
// trigger and the provider) count as zero.
func (h *histogram) record(d time.Duration) {
	us := max(d.Microseconds(), 0)
	i := min(index(uint64(us)), len(h.counts)-1)
	h.counts[i].Add(1)
	h.total.Add(1)
	for {
		cur := h.max.Load()
		if us <= cur || h.max.CompareAndSwap(cur, us) {
			return
		}
	}
}

// count is the number of observations.
func (h *histogram) count() uint64 { return h.total.Load() }

// quantile returns the q-quantile (0 < q ≤ 1), or 0 without observations.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.total.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = min(max(rank, 1), n)
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			us := min(int64(upper(i)), h.max.Load())
			return time.Duration(us) * time.Microsecond
		}
	}
	return h.maxValue()
}

// maxValue is the largest observation.
func (h *histogram) maxValue() time.Duration {
	return time.Duration(h.max.Load()) * time.Microsecond
}
