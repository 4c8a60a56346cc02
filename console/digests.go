package console

import "net/http"

// digest shows one digest (issue 36 item 1): whose, its key and window,
// its state, the notification it sent and the triggers it holds. A
// digest's notification links here from its timeline.
func (c *Console) digest(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.client.GetDigest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "digest", page{Title: "Digest " + d.ID, Path: "/console/notifications", Session: s, Data: d})
	return nil
}
