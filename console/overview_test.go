package console_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// TestOverview: the counts come from real deliveries — two dead ones
// (and their failures by code, from the rollup the worker flushes) and one
// scheduled for later, pending — and the live region answers alone with
// ?fragment=overview.
func TestOverview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	e.deadDeliveries(2, "promo")
	later := time.Now().Add(time.Hour)
	if _, err := e.client.Enqueue(context.Background(), herald.Request{UserID: "alice", Type: "promo", Title: "later",
		Body: "b", Channels: []heraldtype.Channel{heraldtype.ChannelPush}, SendAt: &later}); err != nil {
		t.Fatal(err)
	}
	e.signIn("key-console").expect(t, 303)

	var body string
	deadline := time.Now().Add(10 * time.Second)
	for {
		body = e.get("/console/overview").expect(t, 200).body
		if strings.Contains(body, `<tr data-code="BAD_TOKEN">`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	wellFormed(t, body)
	for _, want := range []string{
		`<section id="overview" data-live`,
		`<table id="deliveries-by-state">`,
		`<td class="num" data-state="pending" data-channel="push">1</td>`,
		`<td class="num" data-state="leased" data-channel="push">0</td>`,
		`<dd id="dead-letters-count" data-count="2">2</dd>`,
		`<dd id="dead-events-count" data-count="0">`,
		`<dd id="oldest-pending">none due</dd>`,
		`<figure id="throughput-chart">`,
		`role="img"`,
		`<table id="failures-by-code">`,
		`<tr data-code="BAD_TOKEN">`,
		`id="reminder-lag"`,
		`id="rule-runs-running"`,
		`id="kafka-lag"`,
		`<h1>Overview</h1>`,
		`aria-current="page"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %s", want)
		}
	}
	if m := regexp.MustCompile(`<tr data-code="BAD_TOKEN"><th scope="row">.*?</th><td class="count">(\d+)</td>`).FindStringSubmatch(body); m == nil || m[1] != "2" {
		t.Errorf("BAD_TOKEN failures: %v", m)
	}

	frag := e.get("/console/overview?fragment=overview").expect(t, 200)
	if strings.Contains(frag.body, "<html") || strings.Contains(frag.body, "<main") || !strings.Contains(frag.body, `id="deliveries-by-state"`) {
		t.Fatalf("the fragment is not the region's content:\n%s", frag.body)
	}
	if frag.header.Get("Cache-Control") != "no-store" {
		t.Errorf("fragment Cache-Control %q", frag.header.Get("Cache-Control"))
	}
	wellFormed(t, "<div>"+frag.body+"</div>")
	if r := e.get("/console/overview?fragment=nope").expect(t, 400); !strings.Contains(r.body, `data-code="invalid_argument"`) {
		t.Errorf("unknown fragment:\n%s", r.body)
	}
	// The fragment of a signed-out browser goes to sign in, like a page.
	e.sessions.expire()
	e.get("/console/overview?fragment=overview").expect(t, 303)
}
