package campaign

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/callout"
)

// Fetch defaults and bounds (S3.7: the recommendation API call has a
// timeout and bounded concurrency).
const (
	DefaultFetchTimeout     = 5 * time.Second
	DefaultFetchConcurrency = 4
	DefaultFetchBatch       = 100
	MaxFetchTimeout         = time.Minute
	MaxFetchConcurrency     = 64
	MaxFetchBatch           = 1000
)

// FetchLimits bound what one fetch answer may hold (issue 31 item 3): an
// answer is read as a stream into bounded values, so what it costs in
// memory is set here, not by the endpoint. An answer over a bound is
// refused whole (its users count fetch_failed, the run's last_error names
// the bound).
type FetchLimits struct {
	// MaxAnswer bounds an answer's body in bytes (campaigns.fetch_max_answer).
	MaxAnswer int64
	// MaxItems bounds one user's items (campaigns.fetch_max_items).
	MaxItems int
	// MaxFields bounds one user's fields (campaigns.fetch_max_fields).
	MaxFields int
	// MaxValues bounds the JSON values of one answer, every value counted
	// wherever it is nested — users, items, fields and what they hold
	// (campaigns.fetch_max_values).
	MaxValues int
}

// Defaults and most of FetchLimits. 100 users a call with 100 items of a
// few fields each fit the defaults; the heap one answer may take stays in
// the tens of MiB.
const (
	DefaultFetchMaxAnswer = 4 << 20
	DefaultFetchMaxItems  = 100
	DefaultFetchMaxFields = 100
	DefaultFetchMaxValues = 100_000
	MaxFetchMaxAnswer     = 64 << 20
	MaxFetchMaxValues     = 10_000_000
)

// withDefaults fills in zero limits; Check refuses the rest.
func (l FetchLimits) withDefaults() FetchLimits {
	if l.MaxAnswer == 0 {
		l.MaxAnswer = DefaultFetchMaxAnswer
	}
	if l.MaxItems == 0 {
		l.MaxItems = DefaultFetchMaxItems
	}
	if l.MaxFields == 0 {
		l.MaxFields = DefaultFetchMaxFields
	}
	if l.MaxValues == 0 {
		l.MaxValues = DefaultFetchMaxValues
	}
	return l
}

// Check refuses limits out of bounds, naming the configuration key.
func (l FetchLimits) Check() error {
	l = l.withDefaults()
	switch {
	case l.MaxAnswer < 0 || l.MaxAnswer > MaxFetchMaxAnswer:
		return fmt.Errorf("campaigns.fetch_max_answer %d is outside 1..%d bytes", l.MaxAnswer, MaxFetchMaxAnswer)
	case l.MaxItems < 0 || l.MaxFields < 0:
		return fmt.Errorf("campaigns.fetch_max_items and fetch_max_fields must not be negative")
	case l.MaxValues < 0 || l.MaxValues > MaxFetchMaxValues:
		return fmt.Errorf("campaigns.fetch_max_values %d is outside 1..%d", l.MaxValues, MaxFetchMaxValues)
	}
	return nil
}

// FetchRequest is the body Herald POSTs to a campaign's fetch URL.
type FetchRequest struct {
	Campaign string   `json:"campaign"`
	Run      string   `json:"run"`
	UserIDs  []string `json:"user_ids"`
}

// FetchAnswer is what the endpoint answers: per user, the items and
// fields the templates see. A user it leaves out gets nothing from the run
// (counted fetch_failed: no content). It documents the shape;
// DecodeFetchAnswer reads it.
type FetchAnswer struct {
	Users map[string]UserContent `json:"users"`
}

// UserContent is one user's fetched content.
type UserContent struct {
	Items  []any          `json:"items"`
	Fields map[string]any `json:"fields"`
}

// fetchAll asks f's endpoint for the content of users, in calls of
// f.BatchSize ids, at most f.Concurrency at once, each bounded by
// f.Timeout, and hands each call's outcome to use as it arrives — one at
// a time — so its content is rendered and dropped before the answers of
// later calls pile up (issue 31 item 3). A failed call (refused, no
// answer, non-2xx, an answer that does not decode or breaks a bound) is
// given to use with its error.
func fetchAll(ctx context.Context, caller *callout.Caller, lim FetchLimits, f heraldtype.CampaignFetch, campaign, run string,
	users []string, use func(chunk []string, content map[string]UserContent, err error)) {
	timeout, conc, size := f.Timeout.Std(), f.Concurrency, f.BatchSize
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	if conc <= 0 {
		conc = DefaultFetchConcurrency
	}
	if size <= 0 {
		size = DefaultFetchBatch
	}
	lim = lim.withDefaults()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for start := 0; start < len(users); start += size {
		chunk := users[start:min(start+size, len(users))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			content, err := fetchOne(ctx, caller, lim, f, timeout, FetchRequest{Campaign: campaign, Run: run, UserIDs: chunk})
			mu.Lock()
			defer mu.Unlock()
			use(chunk, content, err)
		}()
	}
	wg.Wait()
}

func fetchOne(ctx context.Context, caller *callout.Caller, lim FetchLimits, f heraldtype.CampaignFetch, timeout time.Duration,
	body FetchRequest) (map[string]UserContent, error) {
	if caller == nil {
		return nil, fmt.Errorf("fetch: no callout caller is configured")
	}
	asked := make(map[string]bool, len(body.UserIDs))
	for _, u := range body.UserIDs {
		asked[u] = true
	}
	var content map[string]UserContent
	err := caller.Post(ctx, callout.Call{URL: f.URL, Timeout: timeout, MaxBytes: lim.MaxAnswer, Secret: f.Secret, Body: body},
		func(r io.Reader) (err error) {
			content, err = DecodeFetchAnswer(r, lim, asked)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	return content, nil
}
