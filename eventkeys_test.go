package herald

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 30 item 5: the stale guard is per source and subject. A product
// topic's versions (epoch milliseconds) do not make the API's events of
// the same subject stale, and the reverse; within one source an older
// version is still stale.
func TestStaleGuardIsPerSource(t *testing.T) {
	p := newRulePipeline(t)
	kafka := priceDropRule()
	api := priceDropRule()
	api.Name, api.Source = "price-drop-api", heraldtype.RuleSource{}
	for _, r := range []Rule{kafka, api} {
		if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	fromTopic := priceChange("ev-1", 10000, 8500)
	fromTopic.Version = 1_764_000_000_000
	if out, err := p.client.Track(p.ctx, fromTopic); err != nil || out.Stale {
		t.Fatalf("the topic's event: %+v %v", out, err)
	}
	fromAPI := priceChange("ev-2", 10000, 8500)
	fromAPI.Topic, fromAPI.Version = "", 5
	if out, err := p.client.Track(p.ctx, fromAPI); err != nil || out.Stale || len(out.Rules) != 1 {
		t.Fatalf("the API's event after the topic's newer version: %+v %v", out, err)
	}
	older := priceChange("ev-3", 10000, 8500)
	older.Version = 1_763_000_000_000
	if out, err := p.client.Track(p.ctx, older); err != nil || !out.Stale {
		t.Fatalf("an older version on the topic: %+v %v", out, err)
	}
}

// Issue 31 item 5 for Go callers and topics: an id is its namespace's;
// the same id with another body is a conflict, never answered as a
// redelivery — on a topic too (a topic recreated reuses its offsets).
func TestEventIDConflicts(t *testing.T) {
	p := newRulePipeline(t)
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("p0:7", 10000, 8500)); err != nil {
		t.Fatal(err)
	}
	if out, err := p.client.Track(p.ctx, priceChange("p0:7", 10000, 8500)); err != nil || !out.Replayed {
		t.Fatalf("a redelivery: %+v %v", out, err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("p0:7", 10000, 7000)); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("the same id with another body: %v, want a conflict", err)
	}
	other := priceChange("p0:7", 10000, 7000)
	other.Namespace = "another"
	if out, err := p.client.Track(p.ctx, other); err != nil || out.Replayed || len(out.Rules) != 1 || out.Rules[0].Run != "product.inventory.v1/another/p0:7" {
		t.Fatalf("the id in another namespace: %+v %v", out, err)
	}
	bad := priceChange("ev-9", 10000, 7000)
	bad.Namespace = "a/b"
	if _, err := p.client.Track(p.ctx, bad); errField(err) != "namespace" {
		t.Fatalf("a namespace with '/': %v", err)
	}
}
