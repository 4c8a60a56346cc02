package bench

import (
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, us := range []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 65_535, 1 << 20, 1 << 40} {
		i := index(us)
		if i < prev {
			t.Fatalf("index(%d) = %d is below the previous %d", us, i, prev)
		}
		prev = i
		if up := upper(i); up < us || float64(up-us) > 0.016*float64(us)+1 {
			t.Fatalf("value %d lands in bucket %d with upper bound %d: not within 1.6 %%", us, i, up)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Fatal("empty histogram has a median")
	}
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Millisecond)
	}
	h.record(-time.Second) // clock skew counts as zero
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.quantile(c.q)
		if got < c.want-c.want/50 || got > c.want+c.want/50 {
			t.Errorf("quantile(%v) = %v, want %v ± 2 %%", c.q, got, c.want)
		}
	}
	if h.maxValue() != time.Second || h.count() != 1001 {
		t.Fatalf("max %v, count %d", h.maxValue(), h.count())
	}
}
