package herald

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/sqlite"
)

// BenchmarkTemplatedTrigger100 is a 100-recipient trigger's Enqueue on
// SQLite, its title and body written ("literal") or rendered from the
// type's templates for each recipient ("templated": one read of the
// recipients' locales and zones, a render per recipient, issue 37), each
// recipient with one push
// device; nothing is sent. The difference is the templates' cost at the
// enqueue. docs/PERFORMANCE.md, "Templates", has the figures.
func BenchmarkTemplatedTrigger100(b *testing.B) {
	for _, mode := range []string{"literal", "templated"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "herald.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			if err := st.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			c, err := NewClient(Config{Store: st, Providers: map[string]Provider{"fcm": okProvider{}}, Logger: slog.New(slog.DiscardHandler),
				Types: map[string]TypeConfig{"order": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}})
			if err != nil {
				b.Fatal(err)
			}
			users := make([]string, 100)
			for i := range users {
				users[i] = fmt.Sprintf("u%03d", i)
				in := UserInput{Locale: []string{"en-US", "ko-KR", "ar-EG", "fr"}[i%4],
					Timezone: []string{"America/New_York", "Asia/Seoul", "Africa/Cairo", "Europe/Paris"}[i%4]}
				if _, err := c.PutUser(ctx, users[i], in); err != nil {
					b.Fatal(err)
				}
				if _, err := c.RegisterDevice(ctx, users[i], DeviceInput{DeviceID: "d", Token: "tok-" + users[i], Platform: "android"}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := c.PutTemplates(ctx, "order", heraldtype.MessageTemplates{DefaultLocale: "en", Locales: map[string]heraldtype.ChannelTemplates{
				"en": {Push: &heraldtype.PushTemplate{Title: "Order {{.order}}", Body: `{{plural .count "one" "# item" "other" "# items"}}, {{currency "KRW" .total}}, {{date "datetime" .at}}`}},
				"ko": {Push: &heraldtype.PushTemplate{Title: "주문 {{.order}}", Body: `상품 {{.count}}개 · {{currency "KRW" .total}} · {{date "datetime" .at}}`}},
				"ar": {Push: &heraldtype.PushTemplate{Title: "طلب {{.order}}", Body: `{{plural .count "one" "منتج واحد" "two" "منتجان" "few" "# منتجات" "many" "# منتجًا" "other" "# منتج"}} · {{date "long" .at}}`}},
			}}); err != nil {
				b.Fatal(err)
			}
			r := Request{UserIDs: users, Type: "order", Data: map[string]string{"order": "A-1", "count": "3", "total": "12500", "at": "2026-11-28T15:30:00Z"}}
			if mode == "literal" {
				r.Title, r.Body = "Order A-1", "3 items, ₩12,500, November 28, 2026"
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Enqueue(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(users)), "ns/recipient")
		})
	}
}
