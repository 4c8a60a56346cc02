package httpapi_test

import (
	"testing"

	herald "github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 36 item 1 over the API: a type declared with a digest, its
// triggers answered with the digest they joined, bad digests refused
// naming the field, and the digest sent as one notification whose source
// names it and its count.
func TestDigestRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	e.seedUser("alice")
	for _, bad := range []struct {
		digest map[string]any
		field  string
	}{
		{map[string]any{"title": "x"}, "digest.window"},
		{map[string]any{"window": "1m", "title": "x", "first": "later"}, "digest.first"},
		{map[string]any{"window": "1m", "title": "x", "max_items": 5000}, "digest.max_items"},
		{map[string]any{"window": "1m", "title": "{{.Count"}, "digest.title"},
	} {
		r := e.do("PUT", "/v1/types/comment", map[string]any{"digest": bad.digest})
		if eb := r.errorBody(t); r.status != 400 || eb.Code != "invalid_argument" || eb.Field != bad.field {
			t.Errorf("PUT digest %v = %d %+v, want 400 on %s", bad.digest, r.status, eb, bad.field)
		}
	}
	var typ herald.NotificationType
	digestOf := map[string]any{"window": "1h", "key": "{{.post_id}}",
		"title": "{{.Count}} new comments", "body": "{{range .Items}}{{.Data.author}} {{end}}"}
	e.do("PUT", "/v1/types/comment", map[string]any{"digest": digestOf}).expect(t, 200, &typ)
	if d := typ.Digest; d == nil || d.Window != "1h0m0s" || d.MaxItems != herald.DefaultMaxDigestItems || d.First != "collect" {
		t.Fatalf("PUT answered the digest %+v", typ.Digest)
	}
	// The second trigger fills the digest, which sends it: a window no
	// test outlasts keeps the two together however slow the machine.
	digestOf["max_items"] = 2
	e.do("PUT", "/v1/types/comment", map[string]any{"digest": digestOf}).expect(t, 200, &typ)
	if d := typ.Digest; d == nil || d.MaxItems != 2 {
		t.Fatalf("PUT answered the digest %+v", typ.Digest)
	}
	var digest string
	for _, author := range []string{"ana", "ben"} {
		var res herald.Result
		e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "comment", "title": author + " commented",
			"data": map[string]string{"post_id": "p1", "author": author}}).expect(t, 202, &res)
		n := res.Notifications[0]
		if n.Digest == "" || n.Deliveries != 0 || (digest != "" && n.Digest != digest) {
			t.Fatalf("trigger answered %+v, want an item of one digest", n)
		}
		digest = n.Digest
	}
	r := e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "comment", "title": "no post"})
	if eb := r.errorBody(t); r.status != 400 || eb.Field != "data" {
		t.Fatalf("a trigger without the key's data = %d %+v", r.status, eb)
	}
	var page herald.HistoryPage
	waitFor(t, "the digest's notification", func() bool {
		e.do("GET", "/v1/notifications?type=comment", nil).expect(t, 200, &page)
		return len(page.Notifications) == 1
	})
	var n herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+page.Notifications[0].NotificationID, nil).expect(t, 200, &n)
	if n.Title != "2 new comments" || n.Body != "ana ben " || n.Source == nil || n.Source.Kind != heraldtype.SourceDigest ||
		n.Source.ID != digest || n.Source.Count != 2 || n.Source.Name != "p1" {
		t.Fatalf("digest notification = %+v (source %+v)", n, n.Source)
	}
	var d herald.Digest
	e.do("GET", "/v1/digests/"+digest, nil).expect(t, 200, &d)
	if d.State != "sent" || d.Items != 2 || len(d.Entries) != 2 || d.NotificationID != n.ID || d.Entries[1].Data["author"] != "ben" {
		t.Fatalf("GET /v1/digests = %+v", d)
	}
	if r := e.do("GET", "/v1/digests/nope", nil); r.status != 404 {
		t.Fatalf("an unknown digest: %d", r.status)
	}
	// The list (issue 36): by user, type and state; a bad filter is 400
	// naming it.
	var list heraldtype.DigestPage
	e.do("GET", "/v1/digests?user_id=alice&type=comment&state=sent&limit=10", nil).expect(t, 200, &list)
	if len(list.Digests) != 1 || list.Digests[0].ID != digest || list.NextCursor != "" {
		t.Fatalf("GET /v1/digests = %+v", list)
	}
	e.do("GET", "/v1/digests?state=open", nil).expect(t, 200, &list)
	if len(list.Digests) != 0 {
		t.Fatalf("open digests = %+v", list)
	}
	for q, field := range map[string]string{"state=done": "state", "type=Bad!": "type", "color=red": "color"} {
		r := e.do("GET", "/v1/digests?"+q, nil)
		if eb := r.errorBody(t); r.status != 400 || eb.Field != field {
			t.Errorf("GET /v1/digests?%s = %d %+v, want 400 on %s", q, r.status, eb, field)
		}
	}
}

// Issue 36 item 2 over the API: a user's digest schedule is a field of the
// preferences, refused by name when wrong, and given back as stored.
func TestDigestSchedulePreferences(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	for _, bad := range []struct {
		digest map[string]any
		field  string
	}{
		{map[string]any{"every": "hour", "at": "18:00"}, "types.comment.digest.every"},
		{map[string]any{"every": "week", "at": "18:00", "on": "someday"}, "types.comment.digest.on"},
	} {
		r := e.do("PUT", "/v1/users/alice/preferences", map[string]any{"types": map[string]any{"comment": map[string]any{"digest": bad.digest}}})
		if eb := r.errorBody(t); r.status != 400 || eb.Code != "invalid_argument" || eb.Field != bad.field {
			t.Errorf("PUT %v = %d %+v, want 400 on %s", bad.digest, r.status, eb, bad.field)
		}
	}
	var p herald.Preferences
	e.do("PUT", "/v1/users/alice/preferences", map[string]any{"types": map[string]any{
		"comment": map[string]any{"digest": map[string]any{"every": "week", "on": "monday", "at": "09:00"}}}}).expect(t, 200, &p)
	e.do("GET", "/v1/users/alice/preferences", nil).expect(t, 200, &p)
	if d := p.Types["comment"].Digest; d == nil || d.Every != "week" || d.On != "monday" || d.At != "09:00" {
		t.Fatalf("preferences = %+v", p.Types)
	}
}
