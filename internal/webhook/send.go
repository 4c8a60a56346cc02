package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/outbound"
)

// Target is where a message goes and what signs it: an endpoint's URL and
// its valid secrets (the current one first).
type Target struct {
	URL     string
	Secrets []string
}

// Answer is what an endpoint answered one send.
type Answer struct {
	// Status is the HTTP status, 0 without an answer.
	Status int
	// RetryAfter is the wait a non-2xx answer asked for (Retry-After).
	RetryAfter time.Duration
	// Err is nil for a 2xx; otherwise it says, for an operator, what went
	// wrong ("answered 503", "refused: …", "failed: no answer; …"), and,
	// like the outbound guard, nothing about the network.
	Err error
}

// Send signs m with every secret of t and POSTs it to t.URL through c
// within timeout: one attempt, the dispatcher's and the test probe's
// alike. c must be the guarded *outbound.Client in production, so a
// redirect is a failure and an internal address is refused.
func Send(ctx context.Context, c Doer, t Target, m heraldtype.WebhookMessage, now func() time.Time, timeout time.Duration) Answer {
	body, err := Body(m)
	if err != nil {
		return Answer{Err: fmt.Errorf("the message's data is not JSON: %w", err)}
	}
	secrets := make([]Secret, 0, len(t.Secrets))
	for _, s := range t.Secrets {
		k, err := ParseSecret(s)
		if err != nil {
			return Answer{Err: fmt.Errorf("the endpoint's secret: %w", err)}
		}
		secrets = append(secrets, k)
	}
	h, err := Headers(m.EventID, now(), body, secrets...)
	if err != nil {
		return Answer{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return Answer{Err: fmt.Errorf("the endpoint's URL: %w", err)}
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Webhooks/1")
	resp, err := c.Do(req)
	if err != nil {
		var oe *outbound.Error
		if errors.As(err, &oe) {
			return Answer{Err: errors.New(oe.Code + ": " + oe.Reason)}
		}
		return Answer{Err: errors.New("no answer")}
	}
	// The answer's body is not read beyond a little, so a receiver cannot
	// hold a send open by streaming one.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return Answer{Status: resp.StatusCode}
	}
	return Answer{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), now()),
		Err: fmt.Errorf("answered %d", resp.StatusCode)}
}
