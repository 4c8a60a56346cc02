package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// TestDigestPage (issue 36 item 1): a digest's notification names the
// digest on its timeline and links to its page, which shows the digest's
// state, window and the triggers it holds.
func TestDigestPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "u-1", herald.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	// A window no test outlasts keeps the digest open however slow the
	// machine; the third trigger fills it (max_items), which sends it.
	if _, err := e.client.PutType(ctx, "comment", herald.TypeConfig{Digest: &herald.DigestConfig{Window: "1h",
		Key: "{{.post_id}}", MaxItems: 3, Title: "{{.Count}} new comments"}}); err != nil {
		t.Fatal(err)
	}
	var digest string
	trigger := func(title string) {
		t.Helper()
		res, err := e.client.Enqueue(ctx, herald.Request{UserID: "u-1", Type: "comment", Title: title,
			Data: map[string]string{"post_id": "p<1>"}})
		if err != nil {
			t.Fatal(err)
		}
		if digest != "" && res.Notifications[0].Digest != digest {
			t.Fatalf("%q joined digest %s, want %s", title, res.Notifications[0].Digest, digest)
		}
		digest = res.Notifications[0].Digest
	}
	trigger("Ana commented")
	trigger("Ben commented")
	open := e.get("/console/digests/"+digest).expect(t, 200)
	wellFormed(t, open.body)
	open.has(t, `id="digest-summary"`, `data-state="open"`, `<code>p&lt;1&gt;</code>`, `not sent yet`, `data-seq="2"`, `Ben commented`)
	trigger("Cy commented")
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		h, err := e.client.ListHistory(ctx, herald.HistoryFilter{UserID: "u-1", Type: "comment"})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Notifications) > 0 {
			id = h.Notifications[0].NotificationID
		}
		if time.Now().After(deadline) {
			t.Fatal("the digest produced no notification")
		}
	}
	p := e.get("/console/notifications/"+id).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-kind="digest"`, `Digest of 3 triggers`, `href="/console/digests/`+digest+`"`).lacks(t, `data-kind="trigger"`)
	sent := e.get("/console/digests/"+digest).expect(t, 200)
	sent.has(t, `data-state="sent"`, `id="digest-notification" href="/console/notifications/`+id+`"`)
	e.get("/console/digests/nope").expect(t, 404)
	// The list (issue 36), linked from the nav: filtered by user, type and
	// state; a bad state is refused on the page.
	list := e.get("/console/digests?user=u-1&type=comment&state=sent").expect(t, 200)
	wellFormed(t, list.body)
	list.has(t, `href="/console/digests"`, `<table id="digests">`, `data-digest-id="`+digest+`" data-state="sent"`,
		`href="/console/notifications/`+id+`"`)
	e.get("/console/digests?state=open").expect(t, 200).has(t, `No digest matches.`)
	e.get("/console/digests?state=done").expect(t, 400).has(t, `data-code="invalid_argument"`)
}
