package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 20 item 2: PUT creates (201) then replaces (200), GET reads and
// lists, the dry run answers without sending, DELETE removes; bad input
// names the field; the endpoints need their scopes.
func TestRulesAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/price_drop", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).expect(t, http.StatusOK, nil)
	rule := map[string]any{
		"source":   map[string]any{"kafka_topic": "product.inventory.v1"},
		"when":     map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 10}},
		"audience": map[string]any{"interest": map[string]any{"kinds": []string{"VIEW", "CLICK", "ADD_TO_CART"}, "within": "168h"}, "limit": 100000},
		"notify": map[string]any{"type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off", "body": "Now {{.current_price}}",
			"channels": []string{"push", "in_app"}},
	}
	var r herald.Rule
	e.do("PUT", "/v1/rules/price-drop", rule).expect(t, http.StatusCreated, &r)
	if r.Name != "price-drop" || r.When.Detect.PriceDropPct != 10 {
		t.Fatalf("created: %+v", r)
	}
	e.do("PUT", "/v1/rules/price-drop", rule).expect(t, http.StatusOK, &r)
	e.do("GET", "/v1/rules/price-drop", nil).expect(t, http.StatusOK, &r)
	var page herald.RulePage
	e.do("GET", "/v1/rules?event=PRICE_CHANGE", nil).expect(t, http.StatusOK, &page)
	if len(page.Rules) != 1 {
		t.Fatalf("list: %+v", page)
	}
	var dry herald.RuleDryRun
	e.do("POST", "/v1/rules/price-drop/dry-run", map[string]any{"name": "PRICE_CHANGE", "subject": "product:42",
		"data": map[string]string{"product_name": "Kettle", "previous_price": "10000", "current_price": "8500"}}).expect(t, http.StatusOK, &dry)
	if !dry.Detected || dry.AudienceSize != 1 || dry.Notification == nil || dry.Notification.Title != "Kettle is 15% off" {
		t.Fatalf("dry run: %+v", dry)
	}
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
	}{
		"bad template":  {map[string]any{"when": rule["when"], "audience": rule["audience"], "notify": map[string]any{"type": "price_drop", "title": "{{.x"}}, "notify.title"},
		"bad threshold": {map[string]any{"when": map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 0.0, "price_drop_abs": -3}}, "audience": rule["audience"], "notify": rule["notify"]}, "when.detect.price_drop_abs"},
		// Issue 30 item 5: min 0 is refused like -3, not saved as the default.
		"restock min 0":  {map[string]any{"when": map[string]any{"event": "STOCK_CHANGE", "detect": map[string]any{"restock": map[string]any{"min": 0}}}, "audience": rule["audience"], "notify": rule["notify"]}, "when.detect.restock.min"},
		"restock min -3": {map[string]any{"when": map[string]any{"event": "STOCK_CHANGE", "detect": map[string]any{"restock": map[string]any{"min": -3}}}, "audience": rule["audience"], "notify": rule["notify"]}, "when.detect.restock.min"},
		"unknown type":   {map[string]any{"when": rule["when"], "audience": rule["audience"], "notify": map[string]any{"type": "nope", "title": "x"}}, "notify.type"},
		"unknown field":  {map[string]any{"when": rule["when"], "audience": rule["audience"], "notify": rule["notify"], "color": "red"}, "color"},
		"other name":     {map[string]any{"name": "other", "when": rule["when"], "audience": rule["audience"], "notify": rule["notify"]}, "name"},
	} {
		res := e.do("PUT", "/v1/rules/bad", tc.body)
		if res.status != http.StatusBadRequest {
			t.Fatalf("%s: status %d %s", name, res.status, res.body)
		}
		if eb := res.errorBody(t); eb.Field != tc.field {
			t.Fatalf("%s: field %q, want %q (%s)", name, eb.Field, tc.field, res.body)
		}
	}
	e.do("DELETE", "/v1/rules/price-drop", nil).expect(t, http.StatusNoContent, nil)
	e.do("GET", "/v1/rules/price-drop", nil).expect(t, http.StatusNotFound, nil)

	_, key, err := e.keys.Create(t.Context(), "notify-only", []auth.Scope{auth.ScopeNotificationsWrite})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/v1/rules/x"}, {"GET", "/v1/rules/x"}, {"DELETE", "/v1/rules/x"}, {"GET", "/v1/rules"}, {"POST", "/v1/rules/x/dry-run"},
	} {
		if res := e.do(c.method, c.path, map[string]any{}, "Authorization", "Bearer "+key); res.status != http.StatusForbidden {
			t.Fatalf("%s %s with notifications:write: %d", c.method, c.path, res.status)
		}
	}
}

// Issue 20 items 1 and 2 over HTTP: POST /v1/events applies the rules
// without a source (numbers in data as on Kafka), answers each rule's
// decision with its run, and a redelivery is answered from its record; the
// run is listed under the rule; a data value that is not a scalar is a 400
// naming it.
func TestEventsAPIAppliesRules(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/price_drop", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).expect(t, http.StatusOK, nil)
	e.do("PUT", "/v1/rules/price-drop", map[string]any{
		"when":     map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 10}},
		"audience": map[string]any{"interest": map[string]any{"kinds": []string{"VIEW"}}},
		"notify":   map[string]any{"type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off"},
	}).expect(t, http.StatusCreated, nil)
	ev := map[string]any{"id": "ev-1", "name": "PRICE_CHANGE", "subject": "product:42", "version": 7,
		"data": map[string]any{"product_name": "Kettle", "previous_price": 10000, "current_price": 8500}}
	var out herald.TrackResult
	e.do("POST", "/v1/events", ev).expect(t, http.StatusOK, &out)
	// The run is named by the source, the calling key's namespace and the id.
	if out.EventID != "ev-1" || len(out.Rules) != 1 || !out.Rules[0].Detected || !strings.HasPrefix(out.Rules[0].Run, "http/") ||
		!strings.HasSuffix(out.Rules[0].Run, "/ev-1") || out.Replayed {
		t.Fatalf("event: %+v", out)
	}
	run := out.Rules[0].Run
	e.do("POST", "/v1/events", ev).expect(t, http.StatusOK, &out)
	if !out.Replayed || out.Rules[0].Run != run {
		t.Fatalf("redelivery: %+v", out)
	}
	var runs herald.RuleRunPage
	e.do("GET", "/v1/rules/price-drop/runs", nil).expect(t, http.StatusOK, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Job.Notification.Title != "Kettle is 15% off" {
		t.Fatalf("runs: %+v", runs)
	}
	e.do("GET", "/v1/rules/nope/runs", nil).expect(t, http.StatusNotFound, nil)
	ev["data"] = map[string]any{"price": map[string]any{"amount": 1}}
	res := e.do("POST", "/v1/events", ev)
	if res.status != http.StatusBadRequest || res.errorBody(t).Field != "data.price" {
		t.Fatalf("an object in data: %d %s", res.status, res.body)
	}
}

// Issue 31 item 6: a dry run answers the audience's size to any key that
// may read rules, and the sample of user ids only to one that may also
// read interests.
func TestDryRunSampleNeedsInterestsRead(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/price_drop", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).expect(t, http.StatusOK, nil)
	e.do("PUT", "/v1/rules/price-drop", map[string]any{
		"when":     map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 10}},
		"audience": map[string]any{"interest": map[string]any{"kinds": []string{"VIEW"}}},
		"notify":   map[string]any{"type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off"},
	}).expect(t, http.StatusCreated, nil)
	ev := map[string]any{"name": "PRICE_CHANGE", "subject": "product:42",
		"data": map[string]any{"product_name": "Kettle", "previous_price": 10000, "current_price": 8500}}
	for _, c := range []struct {
		scopes []auth.Scope
		sample bool
	}{
		{[]auth.Scope{auth.ScopeRulesRead}, false},
		{[]auth.Scope{auth.ScopeRulesRead, auth.ScopeInterestsRead}, true},
	} {
		_, key, err := e.keys.Create(t.Context(), "dry-run", c.scopes)
		if err != nil {
			t.Fatal(err)
		}
		var dry herald.RuleDryRun
		e.do("POST", "/v1/rules/price-drop/dry-run", ev, "Authorization", "Bearer "+key).expect(t, http.StatusOK, &dry)
		if dry.AudienceSize != 1 {
			t.Fatalf("%v: audience_size %d, want 1", c.scopes, dry.AudienceSize)
		}
		if c.sample && (len(dry.Sample) != 1 || dry.Sample[0] != "u1" || dry.SampleWithheld) {
			t.Fatalf("%v: sample %v withheld %v, want [u1]", c.scopes, dry.Sample, dry.SampleWithheld)
		}
		if !c.sample && (len(dry.Sample) != 0 || !dry.SampleWithheld) {
			t.Fatalf("%v: sample %v withheld %v, want none", c.scopes, dry.Sample, dry.SampleWithheld)
		}
	}
}
