package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// FuzzCompile: no input makes Compile or the evaluation of what it accepts
// panic; a refusal is always an invalid_argument error naming a field; and
// the occurrences of an accepted schedule strictly increase.
func FuzzCompile(f *testing.F) {
	f.Add(uint8(0), "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", "America/New_York", int64(3600), int64(172800), 2.0, "once", int64(0))
	f.Add(uint8(1), "*/30 * * * *", "Australia/Lord_Howe", int64(0), int64(0), 0.0, "all", int64(600))
	f.Add(uint8(1), "0 9 29 2 *", "Asia/Seoul", int64(0), int64(0), 0.0, "", int64(0))
	f.Add(uint8(0), "FREQ=MONTHLY;BYDAY=-1FR,2MO;BYMONTHDAY=-1,13;COUNT=40", "Europe/London", int64(0), int64(0), 0.0, "skip", int64(1))
	f.Add(uint8(0), "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29;UNTIL=20991231", "Pacific/Apia", int64(0), int64(0), 0.0, "", int64(0))
	f.Add(uint8(2), "", "", int64(3600), int64(172800), 2.0, "", int64(0))
	f.Add(uint8(3), "", "UTC", int64(1893456000), int64(0), 0.0, "sometimes", int64(-5))
	f.Fuzz(func(t *testing.T, kind uint8, text, zone string, a, b int64, factor float64, catchUp string, spread int64) {
		s := heraldtype.Schedule{TimeZone: zone, CatchUp: heraldtype.CatchUp(catchUp), Spread: heraldtype.Duration(spread * int64(time.Second))}
		switch kind % 4 {
		case 0:
			s.RRule = text
		case 1:
			s.Cron = text
		case 2:
			s.Backoff = &heraldtype.Backoff{First: heraldtype.Duration(a * int64(time.Second)), Max: heraldtype.Duration(b * int64(time.Second)), Factor: factor}
		case 3:
			s.At = time.Unix(a%(1<<36), 0)
		}
		p, err := Compile(s, "Asia/Seoul")
		if err != nil {
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field == "" {
				t.Fatalf("refusal %v is not an invalid_argument naming a field", err)
			}
			return
		}
		start := time.Date(2026, 11, 25, 3, 4, 5, 0, time.UTC)
		anchor := Anchor{Key: text, Start: start}
		o, ok := p.First(anchor, 0)
		if _, err := p.CheckFirst(anchor, 0); (err == nil) != ok {
			t.Fatalf("CheckFirst disagrees with First: %v %v", err, ok)
		}
		for i := 0; ok && i < 5; i++ {
			if !o.At.After(start) && i == 0 {
				t.Fatalf("first occurrence %s is not after the start", o.At)
			}
			n, more := p.Next(anchor, o.At, i+1)
			if more && !n.At.After(o.At) {
				t.Fatalf("%s after %s", n.At, o.At)
			}
			o, ok = n, more
		}
		if first, ok := p.First(anchor, 0); ok {
			p.CatchUp(anchor, first, 0, first.Due.Add(time.Duration(b%(1<<40))*time.Second))
		}
	})
}
