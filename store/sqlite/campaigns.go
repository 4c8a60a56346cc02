package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The campaigns (issue 19 item 6, S3.7): store.Campaigns on SQLite. Every
// write is one IMMEDIATE transaction on the one write connection, so a
// scheduled start, a batch and a restart are serialised; the guards of
// store/rules/campaigns.go decide which of two racing writers applies.

const campaignColumns = `name, definition, paused, next_at, next_occurrence, last_run_id, version, created_at, updated_at`

const campaignRunColumns = `campaign, run_id, occurrence, state, cursor, recipients, enqueued, skipped, fetch_failed,
	render_failed, last_error, restarts, version, started_at, updated_at, finished_at`

func scanCampaign(sc interface{ Scan(...any) error }) (heraldtype.Campaign, error) {
	var c heraldtype.Campaign
	var def string
	var next, nominal sql.NullInt64
	var created, updated int64
	if err := sc.Scan(&c.Name, &def, &c.Paused, &next, &nominal, &c.LastRunID, &c.Version, &created, &updated); err != nil {
		return c, err
	}
	c.NextAt, c.NextOccurrence = timeOf(next), timeOf(nominal)
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, store.DecodeCampaign([]byte(def), &c)
}

func scanCampaignRun(sc interface{ Scan(...any) error }) (heraldtype.CampaignRun, error) {
	var r heraldtype.CampaignRun
	var occ, started, updated int64
	var finished sql.NullInt64
	err := sc.Scan(&r.Campaign, &r.ID, &occ, &r.State, &r.Cursor, &r.Recipients, &r.Enqueued, &r.Skipped, &r.FetchFailed,
		&r.RenderFailed, &r.LastError, &r.Restarts, &r.Version, &started, &updated, &finished)
	r.Occurrence, r.StartedAt, r.UpdatedAt, r.FinishedAt = fromMicros(occ), fromMicros(started), fromMicros(updated), timeOf(finished)
	return r, err
}

// PutCampaign implements store.Campaigns.
func (s *Store) PutCampaign(ctx context.Context, c heraldtype.Campaign, now time.Time) (heraldtype.Campaign, bool, error) {
	if err := store.CheckCampaign(c, now); err != nil {
		return heraldtype.Campaign{}, false, err
	}
	def, err := store.EncodeCampaign(c)
	if err != nil {
		return heraldtype.Campaign{}, false, err
	}
	var out heraldtype.Campaign
	err = s.inTx(ctx, func(tx *writeTx) error {
		rows, err := s.query(ctx, tx, `INSERT INTO campaigns (name, definition, paused, next_at, next_occurrence, version,
	created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)
ON CONFLICT (name) DO UPDATE SET `+rules.CampaignUpdateSQL+`
RETURNING `+campaignColumns, c.Name, string(def), c.Paused, nullMicros(c.NextAt), nullMicros(c.NextOccurrence),
			micros(now), micros(now))
		if err != nil {
			return formatError(err, "campaign "+quote(c.Name))
		}
		defer rows.Close()
		if !rows.Next() {
			return formatError(rows.Err(), "campaign "+quote(c.Name))
		}
		if out, err = scanCampaign(rows); err != nil {
			return formatError(err, "campaign "+quote(c.Name))
		}
		return formatError(rows.Close(), "campaign "+quote(c.Name))
	})
	if err != nil {
		return heraldtype.Campaign{}, false, err
	}
	return out, out.Version == 1, nil
}

// GetCampaign implements store.Campaigns.
func (s *Store) GetCampaign(ctx context.Context, name string) (heraldtype.Campaign, error) {
	c, err := scanCampaign(s.read.QueryRowContext(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.CampaignNotFound(name)
	}
	return c, formatError(err, "campaign "+quote(name))
}

// DeleteCampaign implements store.Campaigns: its runs and recipient rows
// go with it (ON DELETE CASCADE).
func (s *Store) DeleteCampaign(ctx context.Context, name string) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		n, err := s.execN(ctx, tx, "campaign "+quote(name), `DELETE FROM campaigns WHERE name = ?`, name)
		if err == nil && n == 0 {
			return store.CampaignNotFound(name)
		}
		return err
	})
}

// ListCampaigns implements store.Campaigns.
func (s *Store) ListCampaigns(ctx context.Context, f heraldtype.CampaignFilter) ([]heraldtype.Campaign, string, error) {
	limit, after, err := store.CheckCampaignFilter(f)
	if err != nil {
		return nil, "", err
	}
	cs, err := s.campaigns(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE name > ? ORDER BY name LIMIT ?`, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	cs, next := store.CampaignPage(cs, limit)
	return cs, next, nil
}

// DueCampaigns implements store.Campaigns.
func (s *Store) DueCampaigns(ctx context.Context, now time.Time, limit int) ([]heraldtype.Campaign, error) {
	if err := store.CheckDueCampaigns(limit); err != nil {
		return nil, err
	}
	return s.campaigns(ctx, `SELECT `+campaignColumns+` FROM campaigns
WHERE paused = 0 AND next_at IS NOT NULL AND next_at <= ? ORDER BY next_at, name LIMIT ?`, micros(now), limit)
}

func (s *Store) campaigns(ctx context.Context, query string, args ...any) ([]heraldtype.Campaign, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "campaigns")
	}
	defer rows.Close()
	var cs []heraldtype.Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return nil, formatError(err, "campaigns")
		}
		cs = append(cs, c)
	}
	return cs, formatError(rows.Err(), "campaigns")
}

// NextCampaignAt implements store.Campaigns.
func (s *Store) NextCampaignAt(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.read.QueryRowContext(ctx, `SELECT min(next_at) FROM campaigns WHERE paused = 0 AND next_at IS NOT NULL`).Scan(&next)
	if err != nil {
		return time.Time{}, false, formatError(err, "campaigns")
	}
	return timeOf(next), next.Valid, nil
}

// StartCampaignRun implements store.Campaigns.
func (s *Store) StartCampaignRun(ctx context.Context, p store.CampaignRunStart) (store.CampaignRunStarted, error) {
	if err := store.CheckCampaignRunStart(p); err != nil {
		return store.CampaignRunStarted{}, err
	}
	var out store.CampaignRunStarted
	what := "campaign " + quote(p.Campaign)
	err := s.inTx(ctx, func(tx *writeTx) error {
		out = store.CampaignRunStarted{}
		if a := p.Advance; a != nil {
			var args []any
			n, err := s.execN(ctx, tx, what, rules.CampaignAdvanceSQL("campaigns", p.Campaign, p.RunID, a.Version,
				a.NextAt, a.NextOccurrence, mark(&args)), args...)
			if err != nil || n == 0 {
				return err // moved on: another runner started this due time
			}
			out.Advanced = true
			if p.RunID == "" {
				return nil
			}
		} else {
			n, err := s.execN(ctx, tx, what, `UPDATE campaigns SET last_run_id = ? WHERE name = ?`, p.RunID, p.Campaign)
			if err == nil && n == 0 {
				err = store.CampaignNotFound(p.Campaign)
			}
			if err != nil {
				return err
			}
		}
		res, err := s.exec(ctx, tx, `INSERT INTO campaign_runs (campaign, run_id, occurrence, state, version, started_at, updated_at)
VALUES (?, ?, ?, 'running', 1, ?, ?) ON CONFLICT (campaign, run_id) DO NOTHING`,
			p.Campaign, p.RunID, micros(p.Occurrence), micros(p.Now), micros(p.Now))
		n, err := affected(res, err, what)
		if err != nil {
			return err
		}
		out.Created, out.Started = n == 1, n == 1
		if n == 0 && p.Restart {
			var args []any
			n, err := s.execN(ctx, tx, what, rules.CampaignRunRestartSQL("campaign_runs", p.Campaign, p.RunID, p.Now, mark(&args)), args...)
			if err != nil {
				return err
			}
			out.Started = n == 1
		}
		out.Run, err = scanCampaignRun(s.txRow(ctx, tx, `SELECT `+campaignRunColumns+` FROM campaign_runs WHERE campaign = ? AND run_id = ?`,
			p.Campaign, p.RunID))
		return formatError(err, what)
	})
	return out, err
}

// execN runs a statement in tx and returns how many rows it changed.
func (s *Store) execN(ctx context.Context, tx *writeTx, what, query string, args ...any) (int, error) {
	res, err := s.exec(ctx, tx, query, args...)
	return affected(res, err, what)
}

// txRow runs a one-row query in tx.
func (s *Store) txRow(ctx context.Context, tx *writeTx, query string, args ...any) *sql.Row {
	return tx.QueryRowContext(ctx, query, args...)
}

// GetCampaignRun implements store.Campaigns.
func (s *Store) GetCampaignRun(ctx context.Context, campaign, runID string) (heraldtype.CampaignRun, error) {
	r, err := scanCampaignRun(s.read.QueryRowContext(ctx, `SELECT `+campaignRunColumns+` FROM campaign_runs
WHERE campaign = ? AND run_id = ?`, campaign, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, store.CampaignRunNotFound(campaign, runID)
	}
	return r, formatError(err, "campaign run")
}

// ListCampaignRuns implements store.Campaigns.
func (s *Store) ListCampaignRuns(ctx context.Context, f heraldtype.CampaignRunFilter) ([]heraldtype.CampaignRun, string, error) {
	limit, cur, err := store.CheckCampaignRunFilter(f)
	if err != nil {
		return nil, "", err
	}
	if _, err := s.GetCampaign(ctx, f.Campaign); err != nil {
		return nil, "", err
	}
	q := `SELECT ` + campaignRunColumns + ` FROM campaign_runs WHERE campaign = ?`
	args := []any{f.Campaign}
	if !cur.IsZero() {
		q += ` AND (started_at < ? OR (started_at = ? AND run_id < ?))`
		args = append(args, micros(cur.StartedAt), micros(cur.StartedAt), cur.ID)
	}
	rs, err := s.campaignRuns(ctx, q+` ORDER BY started_at DESC, run_id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	rs, next := store.CampaignRunPage(rs, limit)
	return rs, next, nil
}

// ReachedRecipients implements store.Campaigns.
func (s *Store) ReachedRecipients(ctx context.Context, campaign, runID string, userIDs []string) (map[string]bool, error) {
	if err := store.CheckReachedRecipients(campaign, runID, userIDs); err != nil {
		return nil, err
	}
	reached := map[string]bool{}
	err := inLists(userIDs, func(ids []any) error {
		rows, err := s.read.QueryContext(ctx, `SELECT user_id FROM campaign_recipients WHERE campaign = ? AND run_id = ?
AND user_id IN (`+marks(len(ids))+`)`, append([]any{campaign, runID}, ids...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				return err
			}
			reached[u] = true
		}
		return rows.Err()
	})
	return reached, formatError(err, "campaign recipients")
}

// RunningCampaignRuns implements store.Campaigns.
func (s *Store) RunningCampaignRuns(ctx context.Context, limit int) ([]heraldtype.CampaignRun, error) {
	if err := store.CheckDueCampaigns(limit); err != nil {
		return nil, err
	}
	return s.campaignRuns(ctx, `SELECT `+campaignRunColumns+` FROM campaign_runs WHERE state = 'running'
ORDER BY started_at, campaign, run_id LIMIT ?`, limit)
}

func (s *Store) campaignRuns(ctx context.Context, query string, args ...any) ([]heraldtype.CampaignRun, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "campaign runs")
	}
	defer rows.Close()
	var rs []heraldtype.CampaignRun
	for rows.Next() {
		r, err := scanCampaignRun(rows)
		if err != nil {
			return nil, formatError(err, "campaign runs")
		}
		rs = append(rs, r)
	}
	return rs, formatError(rows.Err(), "campaign runs")
}

// AdvanceCampaignRun implements store.Campaigns: the guarded run update
// first (rules.CampaignRunAdvanceSQL), then the recipient records, then
// the enqueue of the users newly recorded, through the code path of
// Enqueue, all in one transaction.
func (s *Store) AdvanceCampaignRun(ctx context.Context, b store.CampaignBatch) (store.CampaignBatchResult, error) {
	if err := store.CheckCampaignBatch(b); err != nil {
		return store.CampaignBatchResult{}, err
	}
	var out store.CampaignBatchResult
	what := "campaign run " + quote(b.RunID)
	err := s.inTx(ctx, func(tx *writeTx) error {
		out = store.CampaignBatchResult{}
		var args []any
		n, err := s.execN(ctx, tx, what, rules.CampaignRunAdvanceSQL("campaign_runs", rules.RunAdvance{
			Campaign: b.Campaign, RunID: b.RunID, Version: b.Version, Cursor: b.Cursor, Recipients: b.Recipients,
			FetchFailed: b.FetchFailed, RenderFailed: b.RenderFailed, LastError: b.LastError, Finish: string(b.Finish),
			Now: b.Now}, mark(&args)), args...)
		if err != nil || n == 0 {
			return err // the run moved on: nothing of the batch is written
		}
		out.Applied = true
		reached := map[string]bool{}
		if b.Enqueue != nil {
			if err := insertBatches(b.Enqueue.Notifications, func(ns []heraldtype.Notification) error {
				args := make([]any, 0, 4*len(ns))
				for _, n := range ns {
					args = append(args, b.Campaign, b.RunID, n.UserID, n.ID)
				}
				rows, err := s.query(ctx, tx, `INSERT INTO campaign_recipients (campaign, run_id, user_id, notification_id)
VALUES `+rowMarks(len(ns), 4)+` ON CONFLICT DO NOTHING RETURNING user_id`, args...)
				if err != nil {
					return formatError(err, what)
				}
				defer rows.Close()
				for rows.Next() {
					var u string
					if err := rows.Scan(&u); err != nil {
						return formatError(err, what)
					}
					reached[u] = true
				}
				return formatError(rows.Err(), what)
			}); err != nil {
				return err
			}
			out.Skipped = len(b.Enqueue.Notifications) - len(reached)
		}
		out.Skipped += b.Skipped
		if p := store.RecipientsOnly(b.Enqueue, reached); p != nil {
			if out.Result, err = s.enqueue(ctx, tx, *p); err != nil {
				return err
			}
			out.Enqueued = len(p.Notifications)
		}
		args = nil
		if _, err := s.exec(ctx, tx, rules.CampaignRunCountSQL("campaign_runs", b.Campaign, b.RunID, out.Enqueued, out.Skipped, mark(&args)), args...); err != nil {
			return formatError(err, what)
		}
		out.Run, err = scanCampaignRun(s.txRow(ctx, tx, `SELECT `+campaignRunColumns+` FROM campaign_runs WHERE campaign = ? AND run_id = ?`,
			b.Campaign, b.RunID))
		return formatError(err, what)
	})
	return out, err
}

// PruneCampaignRuns implements store.Campaigns.
func (s *Store) PruneCampaignRuns(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneFinished(limit); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		var args []any
		var err error
		n, err = s.execN(ctx, tx, "campaign runs", rules.CampaignRunPruneSQL("campaign_runs", cutoff, limit, mark(&args)), args...)
		return err
	})
	return n, err
}

// AudienceUsers implements store.Campaigns: a keyset page of users by id.
func (s *Store) AudienceUsers(ctx context.Context, q store.AudienceQuery) ([]store.AudienceUser, error) {
	if err := store.CheckAudienceQuery(q); err != nil {
		return nil, err
	}
	var args []any
	m := mark(&args)
	query := `SELECT id, timezone, locale FROM users WHERE id > ` + m(q.After)
	if !q.ActiveSince.IsZero() {
		query += ` AND ` + rules.AudienceActiveSQL("users", "devices", q.ActiveSince, m)
	}
	query += ` ORDER BY id LIMIT ` + m(q.Limit)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, formatError(err, "audience")
	}
	defer rows.Close()
	var us []store.AudienceUser
	for rows.Next() {
		var u store.AudienceUser
		if err := rows.Scan(&u.ID, &u.Timezone, &u.Locale); err != nil {
			return nil, formatError(err, "audience")
		}
		us = append(us, u)
	}
	return us, formatError(rows.Err(), "audience")
}
