package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 22 item 5: an explicit empty list where leaving the field out
// means a default is a 400 naming the field, never a silent default;
// leaving it out (or null) keeps the default.
func TestEmptyListsAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	for _, c := range []struct {
		name, method, path, body, field string
	}{
		{"trigger channels", "POST", "/v1/notifications", `{"user_id":"alice","type":"promo","title":"x","channels":[]}`, "channels"},
		{"trigger user_ids", "POST", "/v1/notifications", `{"user_ids":[],"type":"promo","title":"x"}`, "user_ids"},
		{"preference channels", "PUT", "/v1/users/alice/preferences", `{"types":{"promo":{"channels":[]}}}`, "types"},
		{"type channels", "PUT", "/v1/types/promo", `{"channels":[]}`, "channels"},
	} {
		r := e.do(c.method, c.path, c.body)
		if eb := r.errorBody(t); r.status != 400 || eb.Code != heraldtype.EINVALID || eb.Field != c.field {
			t.Errorf("%s: %d %s, want 400 on %s", c.name, r.status, r.body, c.field)
		}
	}
	// Omitted or null: the default (push).
	for _, body := range []string{
		`{"user_id":"alice","type":"promo","title":"omitted"}`,
		`{"user_id":"alice","type":"promo","title":"null","channels":null}`,
	} {
		var trig triggerAnswer
		e.do("POST", "/v1/notifications", body).expect(t, http.StatusAccepted, &trig)
		var st herald.NotificationStatus
		e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
		if len(st.Deliveries) != 1 || st.Deliveries[0].Channel != heraldtype.ChannelPush {
			t.Fatalf("%s: deliveries %+v, want one push delivery", body, st.Deliveries)
		}
	}
	// An empty opted_out_channels opts out of nothing, as it says.
	e.do("PUT", "/v1/users/alice/preferences", `{"opted_out_channels":[],"types":{"promo":{"disabled":true}}}`).expect(t, 200, nil)
	e.do("PUT", "/v1/types/promo", `{}`).expect(t, 200, nil)
}
