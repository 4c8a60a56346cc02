package heraldclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

func TestNewRejectsBadBaseURL(t *testing.T) {
	for _, u := range []string{"", "herald.example.com", "ftp://h", "http://h/?x=1", "http:///path"} {
		if _, err := heraldclient.New(u); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
	if _, err := heraldclient.New("http://h", heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 0})); err == nil {
		t.Error("WithRetry(Attempts 0) succeeded")
	}
	if _, err := heraldclient.New("http://h", heraldclient.WithAPIKey("a\r\nX-Evil: 1")); err == nil {
		t.Error("an API key with a line break was taken")
	}
}

func TestErrorsCarryCodeFieldAndRequestID(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()

	_, err := c.GetUser(ctx, "nobody")
	var herr *heraldclient.Error
	if !errors.As(err, &herr) {
		t.Fatalf("GetUser of a missing user: %v, want an *Error", err)
	}
	if herr.StatusCode != 404 || herr.Code != heraldclient.CodeNotFound || herr.RequestID == "" || herr.Message == "" {
		t.Errorf("404: %+v", herr)
	}
	if !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Error("IsCode(not_found) is false")
	}

	_, err = c.PutUser(ctx, "u1", heraldclient.UserInput{Timezone: "Mars/Olympus"})
	if !errors.As(err, &herr) || herr.StatusCode != 400 || herr.Code != heraldclient.CodeInvalidArgument || herr.Field != "timezone" {
		t.Errorf("400: %v (%+v)", err, herr)
	}
	if !strings.Contains(err.Error(), "invalid_argument") || !strings.Contains(err.Error(), herr.RequestID) {
		t.Errorf("Error() = %q", err.Error())
	}

	// A credential the server does not know.
	bad := s.client(t, heraldclient.WithAPIKey("hk_nope"))
	if _, err := bad.ListTypes(ctx); !heraldclient.IsCode(err, heraldclient.CodeUnauthenticated) {
		t.Errorf("unknown key: %v", err)
	}
}

func TestNonJSONErrorBodyIsAnError(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html>bad gateway</html>"))
	}))
	defer ts.Close()
	c, _ := heraldclient.New(ts.URL, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 1}))
	_, err := c.GetUser(context.Background(), "u")
	var herr *heraldclient.Error
	if !errors.As(err, &herr) || herr.StatusCode != 502 || herr.Code != heraldclient.CodeUnavailable || !strings.Contains(herr.Message, "bad gateway") {
		t.Fatalf("%v (%+v)", err, herr)
	}
}

// flaky answers the first n requests matching pattern with status and
// Retry-After, then passes requests to the real server.
func flaky(n int32, status int, retryAfter string, hits *atomic.Int32) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hits.Add(1) <= n {
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"code":"unavailable","message":"try later"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	var hits atomic.Int32
	s := newServer(t, serverOptions{front: flaky(1, http.StatusServiceUnavailable, "1", &hits)})
	c := s.client(t)
	ctx := context.Background()
	start := time.Now()
	if _, err := c.ListTypes(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("the retry came after %v; Retry-After said 1 s", el)
	}
	if hits.Load() != 2 {
		t.Errorf("%d requests, want 2", hits.Load())
	}
}

func TestRetryAfterIsCappedByMaxBackoff(t *testing.T) {
	var hits atomic.Int32
	s := newServer(t, serverOptions{front: flaky(2, http.StatusTooManyRequests, "120", &hits)})
	c := s.client(t, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}))
	start := time.Now()
	if _, err := c.ListTypes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v; MaxBackoff is 20 ms", el)
	}
}

func TestRetryGivesUpAfterAttempts(t *testing.T) {
	var hits atomic.Int32
	s := newServer(t, serverOptions{front: flaky(100, http.StatusServiceUnavailable, "", &hits)})
	c := s.client(t, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
	_, err := c.ListTypes(context.Background())
	if !heraldclient.IsCode(err, heraldclient.CodeUnavailable) || hits.Load() != 3 {
		t.Errorf("err %v after %d requests, want unavailable after 3", err, hits.Load())
	}
}

func TestNonIdempotentPostIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	s := newServer(t, serverOptions{front: flaky(100, http.StatusServiceUnavailable, "", &hits)})
	c := s.client(t)
	_, err := c.RecordInterests(context.Background(), heraldclient.InterestInput{UserID: "u", Subject: "product:1", Kind: "VIEW"})
	if !heraldclient.IsCode(err, heraldclient.CodeUnavailable) || hits.Load() != 1 {
		t.Errorf("err %v after %d requests, want one request", err, hits.Load())
	}
}

func TestRetryNeverWaitsPastTheContext(t *testing.T) {
	var hits atomic.Int32
	s := newServer(t, serverOptions{front: flaky(100, http.StatusServiceUnavailable, "10", &hits)})
	c := s.client(t, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 5, BaseBackoff: time.Millisecond, MaxBackoff: time.Minute}))

	// A deadline before the server's Retry-After: the error now, not a
	// wait that cannot end in time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.ListTypes(ctx)
	if !heraldclient.IsCode(err, heraldclient.CodeUnavailable) || time.Since(start) > 4*time.Second {
		t.Errorf("err %v after %v", err, time.Since(start))
	}

	// No deadline, cancelled during the wait.
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	start = time.Now()
	_, err = c.ListTypes(ctx2)
	if !errors.Is(err, context.Canceled) || !heraldclient.IsCode(err, heraldclient.CodeUnavailable) || time.Since(start) > 3*time.Second {
		t.Errorf("err %v after %v, want the context's end and the server's last answer", err, time.Since(start))
	}
}

func TestContextCancellationEndsACall(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	c, _ := heraldclient.New(ts.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetUser(ctx, "u")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("err %v after %v, want context.DeadlineExceeded at once", err, time.Since(start))
	}
}

// dropFirst lets the first request to path reach the server, then breaks
// its connection before the answer is written: the call happened, the
// caller never heard.
func dropFirst(method, path string, dropped *atomic.Int32) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == method && r.URL.Path == path && dropped.Add(1) == 1 {
				next.ServeHTTP(httptest.NewRecorder(), r)
				panic(http.ErrAbortHandler)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestTriggerRetriedAfterADroppedAnswerIsOneNotification(t *testing.T) {
	var dropped atomic.Int32
	s := newServer(t, serverOptions{front: dropFirst(http.MethodPost, "/v1/notifications", &dropped)})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "order_shipped", Title: "Shipped",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil {
		t.Fatal(err)
	}
	if dropped.Load() < 2 {
		t.Fatalf("the trigger was sent %d times; the test needs a retry", dropped.Load())
	}
	if !res.Replayed || res.ID == "" || res.IdempotencyKey == "" {
		t.Errorf("result %+v: want the first trigger's notification, replayed", res)
	}
	page, err := c.ListNotifications(ctx, heraldtype.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Notifications) != 1 || page.Notifications[0].NotificationID != res.ID {
		t.Errorf("history %+v: want one notification %s", page.Notifications, res.ID)
	}
	// Another call is another trigger: its own key.
	res2, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "order_shipped", Title: "Shipped",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil || res2.Replayed || res2.ID == res.ID || res2.IdempotencyKey == res.IdempotencyKey {
		t.Errorf("second trigger %+v, %v", res2, err)
	}
	// The caller's key is sent; the same key again is a replay.
	res3, err := c.Trigger(ctx, heraldclient.TriggerRequest{IdempotencyKey: res2.IdempotencyKey, UserID: "u1", Type: "order_shipped",
		Title: "Shipped", Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil || !res3.Replayed || res3.ID != res2.ID {
		t.Errorf("same key: %+v, %v", res3, err)
	}
	// The same key with another request is a conflict.
	_, err = c.Trigger(ctx, heraldclient.TriggerRequest{IdempotencyKey: res2.IdempotencyKey, UserID: "u1", Type: "order_shipped",
		Title: "Other", Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if !heraldclient.IsCode(err, heraldclient.CodeConflict) {
		t.Errorf("same key, another request: %v", err)
	}
}

func asError(err error, target **heraldclient.Error) bool { return errors.As(err, target) }

// The server's own rate limit: its 429 carries Retry-After, which the
// client waits before it tries again, and the call succeeds.
func TestRetryWaitsOutTheServersRateLimit(t *testing.T) {
	s := newServer(t, serverOptions{rateLimit: httpapi.RateLimitConfig{APIKey: httpapi.RateLimit{PerSecond: 1, Burst: 1}}})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.ListTypes(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.ListTypes(ctx); err != nil {
		t.Fatalf("the second call: %v", err)
	}
	if el := time.Since(start); el < 500*time.Millisecond {
		t.Errorf("the second call took %v; the bucket refills at 1/s", el)
	}
	// Without retries the 429 is the caller's, with its Retry-After.
	once := s.client(t, heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 1}))
	_, err := once.ListTypes(ctx)
	var herr *heraldclient.Error
	if !asError(err, &herr) || herr.Code != heraldclient.CodeRateLimited || herr.StatusCode != 429 || herr.RetryAfter < time.Second {
		t.Errorf("without retries: %v (%+v)", err, herr)
	}
}
