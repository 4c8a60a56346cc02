package console_test

import (
	"context"
	"testing"

	"github.com/heraldhq/herald"
)

// TestWhyEventPage (issue 34 item 2): the form asks about an event — its
// id, its topic, the key that posted it — and keeps them in the query
// string; the answer names each rule and its detector's reason. An event
// posted to the API is looked up under the session's key unless another
// is named, which only an admin session may do, as over the API.
func TestWhyEventPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	seedCatalog(t, e)
	ctx := context.Background()
	// Posted to the API by key-console (the console's fake sessions use
	// the key as its id): a 1 % drop price-drop does not detect.
	ev := herald.Event{ID: "ev-1", Name: "PRICE_CHANGE", Subject: "product:42", Namespace: "key-console",
		Data: map[string]string{"product_name": "Kettle", "previous_price": "10000", "current_price": "9900"}}
	if _, err := e.client.Track(ctx, ev); err != nil {
		t.Fatal(err)
	}
	e.signIn("key-console").expect(t, 303)
	e.get("/console/why").expect(t, 200).has(t, `id="why-event" name="event"`, `id="why-event-source" name="event_source"`,
		`id="why-event-namespace" name="event_namespace"`)
	for _, q := range []string{"?user=u-1&event=ev-1", "?user=u-1&event=ev-1&event_namespace=key-console"} {
		p := e.get("/console/why"+q).expect(t, 200)
		wellFormed(t, p.body)
		p.has(t, `<section id="why-answer" data-code="not_detected"`, `id="why-event-note"`, `value="ev-1"`,
			`Rule price-drop did not detect event ev-1: the price dropped 1 %, under the threshold.`, `href="/console/rules/price-drop"`)
	}
	// Another key's namespace needs admin; the refusal sits by its field.
	denied := e.get("/console/why?user=u-1&event=ev-1&event_namespace=key-admin").expect(t, 403)
	wellFormed(t, denied.body)
	denied.has(t, `<p class="field-error" id="error-event_namespace">`, `data-code="permission_denied"`, `value="key-admin"`).lacks(t, `id="why-answer"`)
	bad := e.get("/console/why?user=u-1&event_source=product.inventory.v1").expect(t, 400)
	bad.has(t, `<p class="field-error" id="error-event">`, `value="product.inventory.v1"`)
	e.get("/console/why?user=u-1&event=ev-1&event_source=product.inventory.v1").expect(t, 404).has(t, `data-code="not_found"`)

	// An admin session may name the poster's key.
	e.signIn("key-admin").expect(t, 303)
	e.get("/console/why?user=u-1&event=ev-1").expect(t, 404)
	e.get("/console/why?user=u-1&event=ev-1&event_namespace=key-console").expect(t, 200).has(t, `data-code="not_detected"`)
}
