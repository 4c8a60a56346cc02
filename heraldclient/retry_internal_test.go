package heraldclient

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":       0,
		"3":      3 * time.Second,
		"0":      0,
		"-5":     0,
		"soon":   0,
		"999999": 24 * time.Hour, // bounded
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestBackoffGrowsWithJitterAndStaysUnderMax(t *testing.T) {
	p := RetryPolicy{Attempts: 10, BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for n := 1; n <= 8; n++ {
		full := min(p.BaseBackoff<<(n-1), p.MaxBackoff)
		for range 50 {
			d := p.backoff(n, 0)
			if d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d := p.backoff(1, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Errorf("Retry-After 700 ms: waited %v", d)
	}
	if d := p.backoff(1, time.Hour); d != time.Second {
		t.Errorf("Retry-After 1 h: waited %v, want MaxBackoff", d)
	}
}
