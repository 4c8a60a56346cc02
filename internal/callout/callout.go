// Package callout calls an operator's HTTP endpoint: one home for "POST a
// JSON body to a URL the operator configured, within a timeout, reading at
// most so many bytes of the answer". A campaign's content fetch (S3.7) and
// a rule's audience webhook (issue 20 item 3, S3.3) go through it, so both
// bound a slow or a chatty endpoint the same way and refuse the same URLs.
package callout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// MaxURLLength bounds an endpoint's URL.
const MaxURLLength = 2048

// CheckURL accepts an absolute http or https URL with a host and without
// credentials (a secret in a URL would be shown wherever the definition
// is read back), of at most MaxURLLength bytes.
func CheckURL(raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("must be at most %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return errors.New("must be an http or https URL without credentials")
	}
	return nil
}

// PostJSON POSTs body, as JSON, to url and decodes the answer into out.
// The whole call — connecting, sending, reading the answer — must end
// within timeout; an answer longer than maxBytes is refused unread beyond
// that. A transport error, a timeout, a status other than 2xx and an
// answer that does not decode are errors that name the URL; each is
// temporary as far as callout knows (the caller decides whether to try
// again).
func PostJSON(ctx context.Context, hc *http.Client, url string, timeout time.Duration, maxBytes int64, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	late := func(err error) error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("POST %s: no answer within %v", url, timeout)
		}
		return fmt.Errorf("POST %s: %w", url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return late(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("POST %s: status %d", url, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return late(err)
	}
	if int64(len(raw)) > maxBytes {
		return fmt.Errorf("POST %s: the answer is longer than %d bytes", url, maxBytes)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("POST %s: the answer does not decode: %w", url, err)
	}
	return nil
}
