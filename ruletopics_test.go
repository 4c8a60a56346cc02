package herald

import (
	"fmt"
	"slices"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 20 item 8: the Kafka intake reads the topics the enabled rules
// name — each once, over more than one page of rules; a disabled rule's
// topic and a rule without one (POST /v1/events) are not listed.
func TestRuleTopics(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.Types["price_drop"] = TypeConfig{} })
	put := func(name, topic string, disabled bool) {
		t.Helper()
		r := priceDropRule()
		r.Name, r.Source, r.Disabled = name, heraldtype.RuleSource{KafkaTopic: topic}, disabled
		if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 205 { // more than one page (200)
		put(fmt.Sprintf("r%03d", i), fmt.Sprintf("product.v%d", i%3), false)
	}
	put("http-rule", "", false)
	put("off", "disabled.v1", true)
	got, err := p.client.RuleTopics(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"product.v0", "product.v1", "product.v2"}; !slices.Equal(got, want) {
		t.Fatalf("rule topics: %v, want %v", got, want)
	}
}
