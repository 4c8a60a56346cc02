package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Rules (issue 20 item 2): create, replace keeping CreatedAt, get,
// list by source and event, delete.
func testRules(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	rule := func(name, topic, event string) heraldtype.Rule {
		return heraldtype.Rule{Name: name, Source: heraldtype.RuleSource{KafkaTopic: topic},
			When:     heraldtype.RuleWhen{Event: event, Detect: heraldtype.Detector{PriceDropPct: 10}},
			Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW"}, Within: heraldtype.Duration(time.Hour)}, Limit: 100},
			Notify: heraldtype.RuleNotify{Type: "price_drop", Title: "{{.name}}", Data: map[string]string{"k": "v"},
				Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
	}
	want := rule("price-drop", "product.inventory.v1", "PRICE_CHANGE")
	got, created, err := f.s.PutRule(f.ctx, want, base())
	if err != nil || !created {
		t.Fatalf("PutRule = %v, created %v", err, created)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, base())
	got.CreatedAt, got.UpdatedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stored rule = %+v, want %+v", got, want)
	}
	want.Notify.Title = "{{.other}}"
	want.Disabled = true
	got, created, err = f.s.PutRule(f.ctx, want, at(time.Hour))
	if err != nil || created || got.Notify.Title != "{{.other}}" || !got.Disabled {
		t.Fatalf("replace: %+v, created %v, %v", got, created, err)
	}
	wantTime(t, "CreatedAt after replace", got.CreatedAt, base())
	wantTime(t, "UpdatedAt after replace", got.UpdatedAt, at(time.Hour))
	if g, err := f.s.GetRule(f.ctx, "price-drop"); err != nil || g.Notify.Title != "{{.other}}" {
		t.Fatalf("GetRule = %+v, %v", g, err)
	}
	f.s.PutRule(f.ctx, rule("restock", "product.inventory.v1", "STOCK_CHANGE"), base())
	f.s.PutRule(f.ctx, rule("http-one", "", "PRICE_CHANGE"), base())
	names := func(filter store.RuleFilter) []string {
		t.Helper()
		var out []string
		for {
			rs, next, err := f.s.ListRules(f.ctx, filter)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				out = append(out, r.Name)
			}
			if next == "" {
				return out
			}
			filter.Cursor = next
		}
	}
	for _, tc := range []struct {
		filter store.RuleFilter
		want   []string
	}{
		{store.RuleFilter{Limit: 1}, []string{"http-one", "price-drop", "restock"}},
		{store.RuleFilter{Source: "product.inventory.v1"}, []string{"price-drop", "restock"}},
		{store.RuleFilter{Source: store.SourceHTTP}, []string{"http-one"}},
		{store.RuleFilter{Event: "PRICE_CHANGE"}, []string{"http-one", "price-drop"}},
		{store.RuleFilter{Event: "PRICE_CHANGE", Enabled: true}, []string{"http-one"}},
	} {
		if got := names(tc.filter); !slices.Equal(got, tc.want) {
			t.Fatalf("ListRules(%+v) = %v, want %v", tc.filter, got, tc.want)
		}
	}
	if err := f.s.DeleteRule(f.ctx, "restock"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, f.s.DeleteRule(f.ctx, "restock"), heraldtype.ENOTFOUND)
	_, err = f.s.GetRule(f.ctx, "restock")
	wantCode(t, err, heraldtype.ENOTFOUND)
	_, _, err = f.s.ListRules(f.ctx, store.RuleFilter{Cursor: "!!"})
	wantCode(t, err, heraldtype.EINVALID)
}
