package console

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// digest shows one digest (issue 36 item 1): whose, its key and window,
// its state, the notification it sent and the triggers it holds. A
// digest's notification links here from its timeline.
func (c *Console) digest(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.client.GetDigest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "digest", page{Title: "Digest " + d.ID, Path: "/console/digests", Session: s, Data: d})
	return nil
}

// digestsData is the digest list's.
type digestsData struct {
	User, Type, State string
	Digests           []heraldtype.DigestInfo
	Next              string
	Err               *formResult
}

// digests lists digests, newest first (GET /v1/digests): by user, type
// and state, a page at a time.
func (c *Console) digests(w http.ResponseWriter, r *http.Request, s Session) error {
	d := digestsData{User: query(r, "user"), Type: query(r, "type"), State: query(r, "state")}
	p, err := c.client.ListDigests(r.Context(), herald.DigestFilter{UserID: d.User, Type: d.Type, State: d.State,
		Cursor: query(r, "cursor"), Limit: listLimit})
	if err == nil {
		d.Digests, d.Next = p.Digests, nextLink(r, p.NextCursor)
	}
	var status int
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	c.render(w, r, status, "digests", page{Title: "Digests", Session: s, Data: d})
	return nil
}
