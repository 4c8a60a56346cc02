package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiClient speaks Herald's HTTP API, as any client of a deployed server
// would.
type apiClient struct {
	base   string
	apiKey string
	http   *http.Client
}

func newAPIClient(base, apiKey string, conns int) *apiClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns + 8
	tr.MaxIdleConnsPerHost = conns + 8
	return &apiClient{base: strings.TrimRight(base, "/"), apiKey: apiKey,
		http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

func (a *apiClient) do(ctx context.Context, method, path string, body []byte, header ...string) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.apiKey)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return a.http.Do(req)
}

// call sends a request and fails unless the answer is 2xx.
func (a *apiClient) call(ctx context.Context, method, path string, body []byte, header ...string) ([]byte, error) {
	resp, err := a.do(ctx, method, path, body, header...)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &statusError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(out))}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.retryAfter = time.Duration(s) * time.Second
		}
		return out, e
	}
	return out, nil
}

// statusError is an answer other than 2xx.
type statusError struct {
	status     int
	retryAfter time.Duration // the Retry-After header's, 0 without one
	msg        string
}

func (e *statusError) Error() string { return e.msg }

// retryWait says whether a failed call is worth making again, as a client
// of Herald's API should — a transport error, or 429/503 (the store or the
// server busy), which say so with Retry-After — and how long to wait
// first: the server's Retry-After, or backoff, at most maxWait.
func retryWait(err error, backoff, maxWait time.Duration) (time.Duration, bool) {
	var se *statusError
	if !errors.As(err, &se) {
		return min(backoff, maxWait), true // the connection, not an answer
	}
	if se.status != http.StatusServiceUnavailable && se.status != http.StatusTooManyRequests {
		return 0, false
	}
	if se.retryAfter > 0 {
		return min(se.retryAfter, maxWait), true
	}
	return min(backoff, maxWait), true
}

// waitReady polls /readyz until the server answers 200.
func (a *apiClient) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := a.do(ctx, http.MethodGet, "/readyz", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /readyz: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server %s not ready after %v: %w", a.base, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// settled reports whether no delivery is pending or leased.
func (a *apiClient) settled(ctx context.Context) (bool, error) {
	for _, state := range []string{"pending", "leased"} {
		out, err := a.call(ctx, http.MethodGet, "/v1/deliveries?limit=1&state="+state, nil)
		if err != nil {
			return false, err
		}
		var page struct {
			Deliveries []json.RawMessage `json:"deliveries"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			return false, fmt.Errorf("GET /v1/deliveries: %w", err)
		}
		if len(page.Deliveries) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// benchType is the notification type of every trigger.
const benchType = "bench"

// triggerBody is POST /v1/notifications for users, stamped with the
// trigger time.
func triggerBody(users []string, at time.Time, seq int) []byte {
	b := make([]byte, 0, 128+len(users)*16)
	if len(users) == 1 {
		b = append(b, `{"user_id":`...)
		b = strconv.AppendQuote(b, users[0])
	} else {
		b = append(b, `{"user_ids":[`...)
		for i, u := range users {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, u)
		}
		b = append(b, ']')
	}
	b = append(b, `,"type":"`+benchType+`","title":"Herald bench","body":"Notification `...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `","data":{"`+TriggerTimeKey+`":"`...)
	b = strconv.AppendInt(b, at.UnixNano(), 10)
	return append(b, `"}}`...)
}
