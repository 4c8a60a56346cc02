package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The argument checks, pages and cursors of the campaign methods, decided
// here once for every store.

// Page sizes of the campaign lists.
const (
	DefaultCampaignPage = 50
	MaxCampaignPage     = 200
	// MaxAudiencePage bounds one AudienceUsers page.
	MaxAudiencePage = 10000
)

// CheckCampaign validates what PutCampaign stores: a name, a next due time
// unless the schedule has none (then both are zero).
func CheckCampaign(c heraldtype.Campaign, now time.Time) error {
	if c.Name == "" {
		return heraldtype.FieldErrorf("name", "must not be empty")
	}
	if c.Type == "" {
		return heraldtype.FieldErrorf("type", "must not be empty")
	}
	if now.IsZero() {
		return heraldtype.FieldErrorf("now", "must be set")
	}
	return nil
}

// CampaignNotFound is the answer for a name without a campaign.
func CampaignNotFound(name string) error {
	return heraldtype.Errorf(heraldtype.ENOTFOUND, "campaign %q not found", name)
}

// CampaignRunNotFound is the answer for a run that does not exist.
func CampaignRunNotFound(campaign, run string) error {
	return heraldtype.Errorf(heraldtype.ENOTFOUND, "campaign %q has no run %q", campaign, run)
}

// CheckCampaignFilter returns the page size and the name the page starts
// after.
func CheckCampaignFilter(f heraldtype.CampaignFilter) (limit int, after string, err error) {
	if after, err = decodeKeyCursor(f.Cursor); err != nil {
		return 0, "", err
	}
	if limit, err = pageSize(f.Limit, DefaultCampaignPage, MaxCampaignPage); err != nil {
		return 0, "", err
	}
	return limit, after, nil
}

// CampaignPage trims campaigns read by name with a LIMIT of limit+1.
func CampaignPage(cs []heraldtype.Campaign, limit int) ([]heraldtype.Campaign, string) {
	return page(cs, limit, func(c heraldtype.Campaign) string {
		return base64.RawURLEncoding.EncodeToString([]byte(c.Name))
	})
}

// RunCursor is where a page of runs starts: below (started_at, id) in
// newest-first order; zero for the first page.
type RunCursor struct {
	StartedAt time.Time
	ID        string
}

// IsZero reports the first page.
func (c RunCursor) IsZero() bool { return c.ID == "" }

// CheckCampaignRunFilter returns the page size and cursor of
// ListCampaignRuns.
func CheckCampaignRunFilter(f heraldtype.CampaignRunFilter) (limit int, cur RunCursor, err error) {
	if f.Campaign == "" {
		return 0, cur, heraldtype.FieldErrorf("campaign", "must not be empty")
	}
	return checkRunPage(f.Cursor, f.Limit)
}

// checkRunPage decodes a page of runs' cursor (RunCursor, as runPage
// encodes it) and page size.
func checkRunPage(cursor string, size int) (limit int, cur RunCursor, err error) {
	if cursor != "" {
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		micros, id, ok := strings.Cut(string(b), "|")
		us, perr := strconv.ParseInt(micros, 10, 64)
		if derr != nil || !ok || perr != nil || id == "" {
			return 0, cur, badCursor()
		}
		cur = RunCursor{StartedAt: time.UnixMicro(us).UTC(), ID: id}
	}
	if limit, err = pageSize(size, DefaultCampaignPage, MaxCampaignPage); err != nil {
		return 0, cur, err
	}
	return limit, cur, nil
}

// runPage trims runs read newest first with a LIMIT of limit+1; the
// cursor is the last one's start and id.
func runPage[T any](rs []T, limit int, key func(T) (time.Time, string)) ([]T, string) {
	return page(rs, limit, func(r T) string {
		at, id := key(r)
		return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d|%s", at.UnixMicro(), id)))
	})
}

// CampaignRunPage trims runs read newest first with a LIMIT of limit+1.
func CampaignRunPage(rs []heraldtype.CampaignRun, limit int) ([]heraldtype.CampaignRun, string) {
	return runPage(rs, limit, func(r heraldtype.CampaignRun) (time.Time, string) { return r.StartedAt, r.ID })
}

// CheckCampaignRunStart validates the arguments of StartCampaignRun.
func CheckCampaignRunStart(p CampaignRunStart) error {
	switch {
	case p.Campaign == "":
		return heraldtype.FieldErrorf("campaign", "must not be empty")
	case p.RunID == "" && p.Advance == nil:
		return heraldtype.FieldErrorf("run", "must not be empty")
	case p.Now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	case p.Advance != nil && p.Restart:
		return heraldtype.FieldErrorf("restart", "a scheduled start does not restart a run")
	}
	return nil
}

// CheckReachedRecipients validates the arguments of ReachedRecipients.
func CheckReachedRecipients(campaign, runID string, userIDs []string) error {
	switch {
	case campaign == "" || runID == "":
		return heraldtype.FieldErrorf("run", "campaign and run must not be empty")
	case len(userIDs) > MaxAudiencePage:
		return heraldtype.FieldErrorf("user_ids", "at most %d at once", MaxAudiencePage)
	}
	return nil
}

// CheckCampaignBatch validates the arguments of AdvanceCampaignRun.
func CheckCampaignBatch(b CampaignBatch) error {
	switch {
	case b.Campaign == "" || b.RunID == "":
		return heraldtype.FieldErrorf("run", "campaign and run must not be empty")
	case b.Now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	case b.Finish != "" && b.Finish != heraldtype.RunDone && b.Finish != heraldtype.RunFailed:
		return heraldtype.FieldErrorf("finish", "must be done or failed")
	case b.Recipients < 0 || b.Skipped < 0 || b.FetchFailed < 0 || b.RenderFailed < 0:
		return heraldtype.FieldErrorf("recipients", "counts must not be negative")
	case b.Enqueue != nil && len(b.Enqueue.Notifications) == 0:
		return heraldtype.FieldErrorf("enqueue", "has no notifications")
	}
	if b.Enqueue != nil {
		if b.Enqueue.IdempotencyKey != "" {
			return heraldtype.FieldErrorf("enqueue", "the recipient records are a batch's idempotency; it takes no key")
		}
		seen := make(map[string]bool, len(b.Enqueue.Notifications))
		for _, n := range b.Enqueue.Notifications {
			if seen[n.UserID] {
				return heraldtype.FieldErrorf("enqueue", "user %q has two notifications in one batch", n.UserID)
			}
			seen[n.UserID] = true
		}
	}
	return nil
}

// CheckAudienceQuery validates the arguments of AudienceUsers.
func CheckAudienceQuery(q AudienceQuery) error {
	if q.Limit < 1 || q.Limit > MaxAudiencePage {
		return heraldtype.FieldErrorf("limit", "must be between 1 and %d", MaxAudiencePage)
	}
	return nil
}

// CheckDueCampaigns validates the arguments of DueCampaigns.
func CheckDueCampaigns(limit int) error { return atLeastOne("limit", limit) }

// RecipientsOnly returns p restricted to the notifications of the users
// in reached (the users whose recipient record the batch just wrote),
// nil when none is left.
func RecipientsOnly(p *EnqueueParams, reached map[string]bool) *EnqueueParams {
	if p == nil || len(reached) == 0 {
		return nil
	}
	q := *p
	q.Notifications = nil
	for _, n := range p.Notifications {
		if reached[n.UserID] {
			q.Notifications = append(q.Notifications, n)
		}
	}
	if len(q.Notifications) == 0 {
		return nil
	}
	return &q
}

// campaignDefinition is the JSON the stores keep in a campaign's
// definition column: everything of the campaign that SQL never reads.
type campaignDefinition struct {
	Schedule  heraldtype.Schedule       `json:"schedule"`
	Audience  heraldtype.Audience       `json:"audience"`
	Type      string                    `json:"type"`
	Title     string                    `json:"title,omitempty"`
	Body      string                    `json:"body,omitempty"`
	Data      map[string]string         `json:"data,omitempty"`
	Channels  []heraldtype.Channel      `json:"channels,omitempty"`
	Priority  heraldtype.Priority       `json:"priority,omitempty"`
	Fetch     *heraldtype.CampaignFetch `json:"fetch,omitempty"`
	LocalTime bool                      `json:"local_time,omitempty"`
}

// EncodeCampaign is the definition column of c, the same JSON on every
// store.
func EncodeCampaign(c heraldtype.Campaign) ([]byte, error) {
	b, err := json.Marshal(campaignDefinition{Schedule: c.Schedule, Audience: c.Audience, Type: c.Type, Title: c.Title,
		Body: c.Body, Data: c.Data, Channels: c.Channels, Priority: c.Priority, Fetch: c.Fetch, LocalTime: c.LocalTime})
	if err != nil {
		return nil, fmt.Errorf("campaign %q: definition: %w", c.Name, err)
	}
	return b, nil
}

// DecodeCampaign fills c's definition from its column.
func DecodeCampaign(b []byte, c *heraldtype.Campaign) error {
	var d campaignDefinition
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("campaign %q: definition: %w", c.Name, err)
	}
	c.Schedule, c.Audience, c.Type, c.Title, c.Body = d.Schedule, d.Audience, d.Type, d.Title, d.Body
	c.Data, c.Channels, c.Priority, c.Fetch, c.LocalTime = d.Data, d.Channels, d.Priority, d.Fetch, d.LocalTime
	return nil
}
