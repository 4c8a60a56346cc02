package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The campaigns (issue 19 item 6, S3.7): store.Campaigns on PostgreSQL.
// The guarded UPDATEs of store/rules/campaigns.go take the row lock first
// in each transaction, so of two runners advancing one campaign or one
// run, the second waits for the first to commit, then finds the version
// moved on and writes nothing.

const campaignColumns = `name, definition, paused, next_at, next_occurrence, last_run_id, version, created_at, updated_at`

const campaignRunColumns = `campaign, run_id, occurrence, state, cursor, recipients, enqueued, skipped, fetch_failed,
	render_failed, last_error, restarts, version, started_at, updated_at, finished_at`

func scanCampaign(row interface{ Scan(...any) error }) (heraldtype.Campaign, error) {
	var c heraldtype.Campaign
	var def []byte
	var next, nominal *time.Time
	if err := row.Scan(&c.Name, &def, &c.Paused, &next, &nominal, &c.LastRunID, &c.Version, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	c.NextAt, c.NextOccurrence = timeOf(next), timeOf(nominal)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, store.DecodeCampaign(def, &c)
}

func scanCampaignRun(row interface{ Scan(...any) error }) (heraldtype.CampaignRun, error) {
	var r heraldtype.CampaignRun
	var finished *time.Time
	err := row.Scan(&r.Campaign, &r.ID, &r.Occurrence, &r.State, &r.Cursor, &r.Recipients, &r.Enqueued, &r.Skipped, &r.FetchFailed,
		&r.RenderFailed, &r.LastError, &r.Restarts, &r.Version, &r.StartedAt, &r.UpdatedAt, &finished)
	r.Occurrence, r.StartedAt, r.UpdatedAt, r.FinishedAt = r.Occurrence.UTC(), r.StartedAt.UTC(), r.UpdatedAt.UTC(), timeOf(finished)
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
	out, err := scanCampaign(s.pool.QueryRow(ctx, s.q(`INSERT INTO {s}.campaigns AS campaigns (name, definition, paused,
	next_at, next_occurrence, version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 1, $6, $6)
ON CONFLICT (name) DO UPDATE SET `+rules.CampaignUpdateSQL+`
RETURNING `+campaignColumns), c.Name, def, c.Paused, nullTime(c.NextAt), nullTime(c.NextOccurrence), now.UTC()))
	if err != nil {
		return heraldtype.Campaign{}, false, formatError(err, "campaign "+quote(c.Name))
	}
	return out, out.Version == 1, nil
}

// GetCampaign implements store.Campaigns.
func (s *Store) GetCampaign(ctx context.Context, name string) (heraldtype.Campaign, error) {
	c, err := scanCampaign(s.pool.QueryRow(ctx, s.q(`SELECT `+campaignColumns+` FROM {s}.campaigns WHERE name = $1`), name))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, store.CampaignNotFound(name)
	}
	return c, formatError(err, "campaign "+quote(name))
}

// DeleteCampaign implements store.Campaigns: its runs and recipient rows
// go with it (ON DELETE CASCADE).
func (s *Store) DeleteCampaign(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.campaigns WHERE name = $1`), name)
	if err != nil {
		return formatError(err, "campaign "+quote(name))
	}
	if tag.RowsAffected() == 0 {
		return store.CampaignNotFound(name)
	}
	return nil
}

// ListCampaigns implements store.Campaigns.
func (s *Store) ListCampaigns(ctx context.Context, f heraldtype.CampaignFilter) ([]heraldtype.Campaign, string, error) {
	limit, after, err := store.CheckCampaignFilter(f)
	if err != nil {
		return nil, "", err
	}
	cs, err := s.campaigns(ctx, `SELECT `+campaignColumns+` FROM {s}.campaigns WHERE name > $1 ORDER BY name LIMIT $2`, after, limit+1)
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
	return s.campaigns(ctx, `SELECT `+campaignColumns+` FROM {s}.campaigns
WHERE NOT paused AND next_at IS NOT NULL AND next_at <= $1 ORDER BY next_at, name LIMIT $2`, now.UTC(), limit)
}

func (s *Store) campaigns(ctx context.Context, query string, args ...any) ([]heraldtype.Campaign, error) {
	rows, err := s.pool.Query(ctx, s.q(query), args...)
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
	var next *time.Time
	err := s.pool.QueryRow(ctx, s.q(`SELECT min(next_at) FROM {s}.campaigns WHERE NOT paused AND next_at IS NOT NULL`)).Scan(&next)
	if err != nil {
		return time.Time{}, false, formatError(err, "campaigns")
	}
	return timeOf(next), next != nil, nil
}

// StartCampaignRun implements store.Campaigns.
func (s *Store) StartCampaignRun(ctx context.Context, p store.CampaignRunStart) (store.CampaignRunStarted, error) {
	if err := store.CheckCampaignRunStart(p); err != nil {
		return store.CampaignRunStarted{}, err
	}
	var out store.CampaignRunStarted
	what := "campaign " + quote(p.Campaign)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = store.CampaignRunStarted{}
		if a := p.Advance; a != nil {
			var args []any
			tag, err := tx.Exec(ctx, s.q(rules.CampaignAdvanceSQL("{s}.campaigns", p.Campaign, p.RunID, a.Version,
				a.NextAt, a.NextOccurrence, marker(&args))), args...)
			if err != nil {
				return formatError(err, what)
			}
			if tag.RowsAffected() == 0 {
				return nil // moved on: another runner started this due time
			}
			out.Advanced = true
			if p.RunID == "" {
				return nil
			}
		} else {
			tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.campaigns SET last_run_id = $1 WHERE name = $2`), p.RunID, p.Campaign)
			if err != nil {
				return formatError(err, what)
			}
			if tag.RowsAffected() == 0 {
				return store.CampaignNotFound(p.Campaign)
			}
		}
		tag, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.campaign_runs (campaign, run_id, occurrence, state, version, started_at, updated_at)
VALUES ($1, $2, $3, 'running', 1, $4, $4) ON CONFLICT (campaign, run_id) DO NOTHING`),
			p.Campaign, p.RunID, p.Occurrence.UTC(), p.Now.UTC())
		if err != nil {
			return formatError(err, what)
		}
		created := tag.RowsAffected() == 1
		out.Created, out.Started = created, created
		if !created && p.Restart {
			var args []any
			tag, err := tx.Exec(ctx, s.q(rules.CampaignRunRestartSQL("{s}.campaign_runs", p.Campaign, p.RunID, p.Now, marker(&args))), args...)
			if err != nil {
				return formatError(err, what)
			}
			out.Started = tag.RowsAffected() == 1
		}
		out.Run, err = scanCampaignRun(tx.QueryRow(ctx, s.q(`SELECT `+campaignRunColumns+` FROM {s}.campaign_runs
WHERE campaign = $1 AND run_id = $2`), p.Campaign, p.RunID))
		return formatError(err, what)
	})
	return out, err
}

// GetCampaignRun implements store.Campaigns.
func (s *Store) GetCampaignRun(ctx context.Context, campaign, runID string) (heraldtype.CampaignRun, error) {
	r, err := scanCampaignRun(s.pool.QueryRow(ctx, s.q(`SELECT `+campaignRunColumns+` FROM {s}.campaign_runs
WHERE campaign = $1 AND run_id = $2`), campaign, runID))
	if errors.Is(err, pgx.ErrNoRows) {
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
	q := `SELECT ` + campaignRunColumns + ` FROM {s}.campaign_runs WHERE campaign = $1`
	args := []any{f.Campaign}
	if !cur.IsZero() {
		q += ` AND (started_at, run_id) < ($3, $4)`
		args = append(args, limit+1, cur.StartedAt, cur.ID)
	} else {
		args = append(args, limit+1)
	}
	rs, err := s.campaignRuns(ctx, q+` ORDER BY started_at DESC, run_id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, "", err
	}
	rs, next := store.CampaignRunPage(rs, limit)
	return rs, next, nil
}

// RunningCampaignRuns implements store.Campaigns.
func (s *Store) RunningCampaignRuns(ctx context.Context, limit int) ([]heraldtype.CampaignRun, error) {
	if err := store.CheckDueCampaigns(limit); err != nil {
		return nil, err
	}
	return s.campaignRuns(ctx, `SELECT `+campaignRunColumns+` FROM {s}.campaign_runs WHERE state = 'running'
ORDER BY started_at, campaign, run_id LIMIT $1`, limit)
}

func (s *Store) campaignRuns(ctx context.Context, query string, args ...any) ([]heraldtype.CampaignRun, error) {
	rows, err := s.pool.Query(ctx, s.q(query), args...)
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
// first (it takes the run's row lock), then the recipient records in one
// INSERT … ON CONFLICT DO NOTHING RETURNING, then the enqueue of the users
// newly recorded through the code path of Enqueue, in one transaction.
func (s *Store) AdvanceCampaignRun(ctx context.Context, b store.CampaignBatch) (store.CampaignBatchResult, error) {
	if err := store.CheckCampaignBatch(b); err != nil {
		return store.CampaignBatchResult{}, err
	}
	var out store.CampaignBatchResult
	var woken wake
	what := "campaign run " + quote(b.RunID)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, woken = store.CampaignBatchResult{}, wake{}
		var args []any
		tag, err := tx.Exec(ctx, s.q(rules.CampaignRunAdvanceSQL("{s}.campaign_runs", rules.RunAdvance{
			Campaign: b.Campaign, RunID: b.RunID, Version: b.Version, Cursor: b.Cursor, Recipients: b.Recipients,
			FetchFailed: b.FetchFailed, RenderFailed: b.RenderFailed, LastError: b.LastError, Finish: string(b.Finish),
			Now: b.Now}, marker(&args))), args...)
		if err != nil {
			return formatError(err, what)
		}
		if tag.RowsAffected() == 0 {
			return nil // the run moved on: nothing of the batch is written
		}
		out.Applied = true
		reached := map[string]bool{}
		if b.Enqueue != nil {
			users := make([]string, len(b.Enqueue.Notifications))
			ids := make([]string, len(b.Enqueue.Notifications))
			for i, n := range b.Enqueue.Notifications {
				users[i], ids[i] = n.UserID, n.ID
			}
			rows, err := tx.Query(ctx, s.q(`INSERT INTO {s}.campaign_recipients (campaign, run_id, user_id, notification_id)
SELECT $1, $2, u, n FROM unnest($3::text[], $4::text[]) AS t (u, n)
ON CONFLICT DO NOTHING RETURNING user_id`), b.Campaign, b.RunID, users, ids)
			if err != nil {
				return formatError(err, what)
			}
			for rows.Next() {
				var u string
				if err := rows.Scan(&u); err != nil {
					rows.Close()
					return formatError(err, what)
				}
				reached[u] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return formatError(err, what)
			}
			out.Skipped = len(b.Enqueue.Notifications) - len(reached)
		}
		out.Skipped += b.Skipped
		if p := store.RecipientsOnly(b.Enqueue, reached); p != nil {
			res, w, err := s.enqueue(ctx, pgxQuerier{tx}, *p)
			if err != nil {
				return err
			}
			out.Result, woken, out.Enqueued = res, w, len(p.Notifications)
		}
		args = nil
		if _, err := tx.Exec(ctx, s.q(rules.CampaignRunCountSQL("{s}.campaign_runs", b.Campaign, b.RunID, out.Enqueued, out.Skipped, marker(&args))), args...); err != nil {
			return formatError(err, what)
		}
		out.Run, err = scanCampaignRun(tx.QueryRow(ctx, s.q(`SELECT `+campaignRunColumns+` FROM {s}.campaign_runs
WHERE campaign = $1 AND run_id = $2`), b.Campaign, b.RunID))
		return formatError(err, what)
	})
	if err != nil {
		return store.CampaignBatchResult{}, err
	}
	s.waker.post(woken)
	return out, nil
}

// ReachedRecipients implements store.Campaigns.
func (s *Store) ReachedRecipients(ctx context.Context, campaign, runID string, userIDs []string) (map[string]bool, error) {
	if err := store.CheckReachedRecipients(campaign, runID, userIDs); err != nil {
		return nil, err
	}
	reached := map[string]bool{}
	if len(userIDs) == 0 {
		return reached, nil
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT user_id FROM {s}.campaign_recipients
WHERE campaign = $1 AND run_id = $2 AND user_id = ANY($3::text[])`), campaign, runID, userIDs)
	if err != nil {
		return nil, formatError(err, "campaign recipients")
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, formatError(err, "campaign recipients")
		}
		reached[u] = true
	}
	return reached, formatError(rows.Err(), "campaign recipients")
}

// PruneCampaignRuns implements store.Campaigns.
func (s *Store) PruneCampaignRuns(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneFinished(limit); err != nil {
		return 0, err
	}
	var args []any
	tag, err := s.pool.Exec(ctx, s.q(rules.CampaignRunPruneSQL("{s}.campaign_runs", cutoff, limit, marker(&args))), args...)
	if err != nil {
		return 0, formatError(err, "campaign runs")
	}
	return int(tag.RowsAffected()), nil
}

// AudienceUsers implements store.Campaigns: a keyset page of users by id.
func (s *Store) AudienceUsers(ctx context.Context, q store.AudienceQuery) ([]store.AudienceUser, error) {
	if err := store.CheckAudienceQuery(q); err != nil {
		return nil, err
	}
	var args []any
	m := marker(&args)
	query := `SELECT id, timezone, locale FROM {s}.users WHERE id > ` + m(q.After)
	if !q.ActiveSince.IsZero() {
		query += ` AND ` + rules.AudienceActiveSQL("{s}.users", "{s}.devices", q.ActiveSince, m)
	}
	query += ` ORDER BY id LIMIT ` + m(q.Limit)
	rows, err := s.pool.Query(ctx, s.q(query), args...)
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
