package console_test

import (
	"context"
	"testing"

	"github.com/heraldhq/herald"
)

// TestEngagementPage: the engagement view shows the report's rows with
// their counts and rates, and a refused form says why (issue 35 item 3).
func TestEngagementPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	s := seed(t, e)
	ctx := context.Background()
	page, err := e.client.ListInbox(ctx, s.user, herald.InboxFilter{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("inbox = %+v, %v", page, err)
	}
	if _, err := e.client.MarkInboxRead(ctx, s.user, []int64{page.Items[0].ID}); err != nil {
		t.Fatal(err)
	}
	p := e.get("/console/engagement").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `<table id="engagement">`, `<td data-group="type">news</td><td data-group="channel">in_app</td>`,
		`<td class="num" data-count="sent">1</td>`, `<td class="num" data-count="read">1</td>`, `100.0 %`,
		`<tr id="engagement-total">`, `aria-current="page"`)
	e.get("/console/engagement?range=24h&interval=day").expect(t, 200).has(t, `Day (UTC)</th>`)
	e.get("/console/engagement?range=forever").expect(t, 400).has(t, `data-code="invalid_argument"`)
	e.get("/console/engagement?range=7d&group_by=user").expect(t, 400).has(t, `data-code="invalid_argument"`)
}
