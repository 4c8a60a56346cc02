package message

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// BenchmarkRenderFanOut renders one templated notification for each of
// 100 recipients — their locales (en-US, ko-KR, ar-EG, fr: three with
// templates and one taking the default) and zones in turn — as a
// 100-recipient trigger does: "enqueue" renders the in-app form (the
// notification's title and body, at the enqueue), "deliveries" every
// channel's form (push, SMS, e-mail with its plain part, in-app), which
// the deliveries render one by one before their sends. docs/PERFORMANCE.md,
// "Templates", has the figures.
func BenchmarkRenderFanOut(b *testing.B) {
	mt := order()
	for l, ct := range mt.Locales {
		if ct.InApp == nil {
			ct.InApp = &heraldtype.InAppTemplate{Title: ct.Push.Title, Body: ct.Push.Body}
			mt.Locales[l] = ct
		}
	}
	mt.SampleData = nil
	c, err := Compile(context.Background(), &mt, Config{})
	if err != nil {
		b.Fatal(err)
	}
	var recipients []Recipient
	for i := range 100 {
		z, err := time.LoadLocation([]string{"America/New_York", "Asia/Seoul", "Africa/Cairo", "Europe/Paris"}[i%4])
		if err != nil {
			b.Fatal(err)
		}
		recipients = append(recipients, Recipient{Locale: []string{"en-US", "ko-KR", "ar-EG", "fr"}[i%4], Zone: z})
	}
	data := map[string]string{"name": "Mina", "count": "3", "total": "12500", "at": "2026-11-28T15:30:00Z"}
	for _, bc := range []struct {
		name     string
		channels []heraldtype.Channel
	}{
		{"enqueue", []heraldtype.Channel{heraldtype.ChannelInApp}},
		{"deliveries", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				for _, r := range recipients {
					if _, err := c.Render(ctx, r, data, bc.channels...); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recipients)), "ns/recipient")
		})
	}
}
