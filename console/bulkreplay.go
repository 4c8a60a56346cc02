package console

import (
	"net/http"
	"strconv"
)

// bulkReplay replays everything the filter selects, in two steps: the
// dry run (dry_run=1) counts what would be replayed and answers the page
// with that count and a confirm button carrying the same filter; the
// confirmation replays and redirects to the list with the result in the
// query string, so a reload shows the result and does not replay again.
func (c *Console) bulkReplay(w http.ResponseWriter, r *http.Request, s Session) error {
	f := readDeadFilter(r.PostForm)
	f.Cursor = ""
	if need := replayScope(f.Kind); !s.Can(need) {
		return denied(need)
	}
	dry := r.PostForm.Get("dry_run") == "1"
	if f.Kind == "events" {
		ef, err := f.eventFilter()
		if err != nil {
			return err
		}
		res, err := c.client.ReplayDeadEvents(r.Context(), ef, dry)
		if err != nil {
			return err
		}
		if dry {
			d := deadData{F: f, CanReplay: true, DryRun: &dryRunResult{Count: res.Matched - res.Skipped, Skipped: res.Skipped}}
			return c.renderDead(w, r, s, http.StatusOK, d)
		}
		http.Redirect(w, r, f.URL("bulk_replayed", strconv.Itoa(res.Replayed), "bulk_skipped", strconv.Itoa(res.Skipped),
			"bulk_failed", strconv.Itoa(res.Failed)), http.StatusSeeOther)
		return nil
	}
	df, err := f.deliveryFilter()
	if err != nil {
		return err
	}
	if dry {
		n, capped, err := c.client.CountReplayDeliveries(r.Context(), df)
		if err != nil {
			return err
		}
		return c.renderDead(w, r, s, http.StatusOK, deadData{F: f, CanReplay: true, DryRun: &dryRunResult{Count: n, Capped: capped}})
	}
	df.Cursor, df.Limit = "", 0
	n, err := c.client.ReplayDeliveries(r.Context(), df)
	if err != nil {
		return err
	}
	http.Redirect(w, r, f.URL("bulk_replayed", strconv.Itoa(n)), http.StatusSeeOther)
	return nil
}
