package campaign

import (
	"context"
	"fmt"
	"net/http"
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
	// maxFetchAnswer bounds one answer's body.
	maxFetchAnswer = 16 << 20
)

// FetchRequest is the body Herald POSTs to a campaign's fetch URL.
type FetchRequest struct {
	Campaign string   `json:"campaign"`
	Run      string   `json:"run"`
	UserIDs  []string `json:"user_ids"`
}

// FetchAnswer is what the endpoint answers: per user, the items and
// fields the templates see. A user it leaves out gets nothing from the run
// (counted fetch_failed: no content).
type FetchAnswer struct {
	Users map[string]UserContent `json:"users"`
}

// UserContent is one user's fetched content.
type UserContent struct {
	Items  []any          `json:"items"`
	Fields map[string]any `json:"fields"`
}

// fetched is the outcome of fetching one batch: content by user, and the
// users whose call failed with the (last) error.
type fetched struct {
	content map[string]UserContent
	failed  map[string]bool
	err     error
}

// fetchAll asks f's endpoint for the content of users, in calls of
// f.BatchSize ids, at most f.Concurrency at once, each bounded by
// f.Timeout. A failed call (transport error, timeout, non-2xx, a body that
// does not decode) fails its users; the others keep their content.
func fetchAll(ctx context.Context, hc *http.Client, f heraldtype.CampaignFetch, campaign, run string, users []string) fetched {
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
	out := fetched{content: map[string]UserContent{}, failed: map[string]bool{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for start := 0; start < len(users); start += size {
		chunk := users[start:min(start+size, len(users))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ans, err := fetchOne(ctx, hc, f.URL, timeout, FetchRequest{Campaign: campaign, Run: run, UserIDs: chunk})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.err = err
				for _, u := range chunk {
					out.failed[u] = true
				}
				return
			}
			for _, u := range chunk {
				if c, ok := ans.Users[u]; ok {
					out.content[u] = c
				}
			}
		}()
	}
	wg.Wait()
	return out
}

func fetchOne(ctx context.Context, hc *http.Client, url string, timeout time.Duration, body FetchRequest) (FetchAnswer, error) {
	var ans FetchAnswer
	if err := callout.PostJSON(ctx, hc, url, timeout, maxFetchAnswer, body, &ans); err != nil {
		return ans, fmt.Errorf("fetch: %w", err)
	}
	return ans, nil
}
