package console_test

import (
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
)

// accessible checks what a page's markup alone can show of the
// accessibility the browser test's axe-core run enforces: every form
// control has a label (a label for its id, or one around it), every
// table header cell says its scope, one h1 and a main landmark.
func accessible(t *testing.T, path, body string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(strings.TrimPrefix(body, "<!DOCTYPE html>")))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	type control struct {
		tag, id, name string
		inLabel       bool
	}
	var controls []control
	labelFor := map[string]bool{}
	labels, h1s, mains := 0, 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := func(name string) (string, bool) {
				for _, a := range el.Attr {
					if strings.EqualFold(a.Name.Local, name) {
						return a.Value, true
					}
				}
				return "", false
			}
			switch strings.ToLower(el.Name.Local) {
			case "label":
				labels++
				if f, ok := attr("for"); ok {
					labelFor[f] = true
				}
			case "input", "select", "textarea":
				if typ, _ := attr("type"); typ == "hidden" || typ == "submit" {
					continue
				}
				id, _ := attr("id")
				name, _ := attr("name")
				_, named := attr("aria-label")
				controls = append(controls, control{tag: el.Name.Local, id: id, name: name, inLabel: labels > 0 || named})
			case "th":
				if _, ok := attr("scope"); !ok {
					t.Errorf("%s: a <th> without scope", path)
				}
			case "h1":
				h1s++
			case "main":
				mains++
			}
		case xml.EndElement:
			if strings.EqualFold(el.Name.Local, "label") {
				labels--
			}
		}
	}
	for _, c := range controls {
		if !c.inLabel && (c.id == "" || !labelFor[c.id]) {
			t.Errorf("%s: <%s name=%q id=%q> has no label", path, c.tag, c.name, c.id)
		}
	}
	if h1s != 1 || mains != 1 {
		t.Errorf("%s: %d h1 and %d main", path, h1s, mains)
	}
}

// TestViewsAccessibleMarkup runs accessible over every view, with the
// forms as an admin sees them and as a refused submit shows them.
func TestViewsAccessibleMarkup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	s := seed(t, e)
	seedCatalog(t, e)
	for _, path := range []string{"/console/notifications", "/console/notifications?status=LOST", "/console/notifications/" + s.dead,
		"/console/why", "/console/why?user=" + s.user + "&type=order_shipped", "/console/why?user=" + s.user,
		"/console/why?user=" + s.user + "&event_source=product.inventory.v1",
		"/console/users", "/console/users/" + s.user, "/console/types", "/console/types/digest",
		"/console/rules", "/console/rules/price-drop", "/console/rules/fresh?new=1", "/console/reminders?user=u-1",
		"/console/reminders/cart-1", "/console/digests", "/console/campaigns", "/console/campaigns/weekly",
		"/console/engagement", "/console/engagement?range=30d&interval=day&group_by=rule", "/console/engagement?range=forever"} {
		accessible(t, path, e.get(path).body)
	}
	csrf := e.get("/console/users/" + s.user).csrf(t)
	for path, form := range map[string]string{
		"/console/users/" + s.user + "/preferences": "daily_cap=lots",
		"/console/types/digest":                     "dedupe_window=soon",
		"/console/rules/price-drop":                 "rule=%7B",
		"/console/rules/price-drop/dry-run":         "event=%7B",
		"/console/campaigns/weekly":                 "campaign=%7B",
	} {
		v := mustQuery(t, form)
		v.Set("csrf", csrf)
		r := e.post(path, v).expect(t, 400)
		accessible(t, path, r.body)
	}
}

func mustQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
