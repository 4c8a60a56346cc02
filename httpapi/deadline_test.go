package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// stall is how a stallingStore misbehaves.
type stall int32

const (
	answer       stall = iota // pass every call through
	stallBefore               // hang without writing: the commit never happens
	stallAfterIt              // commit, then hang: the commit's answer is lost
	stallKeys                 // only the API key lookup hangs
)

// stallingStore is a store that goes silent like a database behind a
// network partition: its calls neither answer nor fail until their
// context ends.
type stallingStore struct {
	store.Store
	mode atomic.Int32
}

func (s *stallingStore) set(m stall) { s.mode.Store(int32(m)) }

func (s *stallingStore) Enqueue(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	switch stall(s.mode.Load()) {
	case stallBefore:
		<-ctx.Done()
		return store.EnqueueResult{}, ctx.Err()
	case stallAfterIt:
		if _, err := s.Store.Enqueue(ctx, p); err != nil {
			return store.EnqueueResult{}, err
		}
		<-ctx.Done()
		return store.EnqueueResult{}, ctx.Err()
	}
	return s.Store.Enqueue(ctx, p)
}

func (s *stallingStore) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	if stall(s.mode.Load()) == stallKeys {
		<-ctx.Done()
		return store.APIKey{}, ctx.Err()
	}
	return s.Store.GetAPIKey(ctx, id)
}

func (s *stallingStore) GetUser(ctx context.Context, id string) (heraldtype.User, error) {
	if m := stall(s.mode.Load()); m != answer && m != stallKeys {
		<-ctx.Done()
		return heraldtype.User{}, ctx.Err()
	}
	return s.Store.GetUser(ctx, id)
}

// stallTimeout is the stalling env's store timeout: short enough for the
// tests to wait it out, long enough that a store call that answers —
// SQLite's write of a request that should succeed, on a machine running
// other tests — is not cut short by it (at 200 ms it was, under a load of
// 12 on two CPUs).
const stallTimeout = time.Second

// seedAlice writes alice and her phone through the Client, not the API:
// the stalling env's requests have its short store timeout.
func seedAlice(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "alice", herald.UserInput{Timezone: "Asia/Seoul"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.RegisterDevice(ctx, "alice", herald.DeviceInput{DeviceID: "alice-phone", Token: "tok-alice", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
}

func newStallingEnv(t *testing.T) (*env, *stallingStore) {
	t.Helper()
	var st *stallingStore
	e := newEnv(t, envOptions{storeTimeout: stallTimeout, wrapStore: func(s store.Store) store.Store {
		st = &stallingStore{Store: s}
		return st
	}})
	return e, st
}

// expectStoreTimeout checks the answer to a request whose store went
// silent: 503 unavailable, Retry-After, a body that says so, in about the
// store timeout — never a 500, never as long as the caller would wait.
func expectStoreTimeout(t *testing.T, what string, r response, took time.Duration) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("%s: status %d, want 503; body %s", what, r.status, r.body)
	}
	eb := r.errorBody(t)
	if eb.Code != heraldtype.EUNAVAILABLE || !strings.Contains(eb.Message, "the store did not answer within "+stallTimeout.String()) {
		t.Errorf("%s: body %+v", what, eb)
	}
	if r.header.Get("Retry-After") == "" {
		t.Errorf("%s: no Retry-After", what)
	}
	if took > 5*stallTimeout {
		t.Errorf("%s: answered after %s, want about the %s store timeout", what, took, stallTimeout)
	}
}

// A trigger whose store goes silent before the commit gets 503 and was not
// committed: its retry with the same Idempotency-Key creates the
// notification then, once (issue 24 item 1).
func TestStoreTimeoutBeforeCommit(t *testing.T) {
	t.Parallel()
	e, st := newStallingEnv(t)
	seedAlice(t, e)
	body := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Shipped"}

	st.set(stallBefore)
	start := time.Now()
	r := e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-7")
	expectStoreTimeout(t, "trigger", r, time.Since(start))
	if n := e.notificationCount("alice"); n != 0 {
		t.Fatalf("a trigger answered 503 before its commit left %d notifications", n)
	}

	st.set(answer)
	var first triggerAnswer
	e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-7").expect(t, http.StatusAccepted, &first)
	if first.Replayed || e.notificationCount("alice") != 1 {
		t.Fatalf("retry = %+v, notifications %d; want one new notification", first, e.notificationCount("alice"))
	}
}

// A trigger whose commit happened but whose answer was lost gets 503 too;
// its retry with the same Idempotency-Key returns the committed
// notification and creates nothing (issue 24 item 1).
func TestStoreTimeoutAfterCommit(t *testing.T) {
	t.Parallel()
	e, st := newStallingEnv(t)
	seedAlice(t, e)
	body := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Shipped"}

	st.set(stallAfterIt)
	start := time.Now()
	r := e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-8")
	expectStoreTimeout(t, "trigger", r, time.Since(start))
	if n := e.notificationCount("alice"); n != 1 {
		t.Fatalf("the commit whose answer was lost left %d notifications, want 1", n)
	}

	st.set(answer)
	var again triggerAnswer
	r = e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-8")
	r.expect(t, http.StatusOK, &again)
	if !again.Replayed || len(again.Notifications) != 1 || e.notificationCount("alice") != 1 {
		t.Fatalf("retry = %+v, notifications %d; want the committed one replayed", again, e.notificationCount("alice"))
	}
}

// A read whose store goes silent gets the same 503; the health probes and
// a stream are not bounded by the store timeout.
func TestStoreTimeoutOnRead(t *testing.T) {
	t.Parallel()
	e, st := newStallingEnv(t)
	seedAlice(t, e)
	st.set(stallBefore)
	start := time.Now()
	expectStoreTimeout(t, "GET user", e.do("GET", "/v1/users/alice", nil), time.Since(start))
	if r := e.do("GET", "/healthz", nil); r.status != http.StatusOK {
		t.Errorf("healthz %d", r.status)
	}
}

// A key lookup the store does not answer is the server's failure: 503 with
// Retry-After, and no WWW-Authenticate challenge — the caller's key was not
// refused (the contract lists the challenge on 401 only).
func TestStoreTimeoutOnKeyLookup(t *testing.T) {
	t.Parallel()
	e, st := newStallingEnv(t)
	_, key, err := e.keys.Create(context.Background(), "reader", []auth.Scope{auth.ScopeUsersRead})
	if err != nil {
		t.Fatal(err)
	}
	st.set(stallKeys)
	start := time.Now()
	r := e.do("GET", "/v1/users/alice", nil, "Authorization", "Bearer "+key)
	expectStoreTimeout(t, "key lookup", r, time.Since(start))
	if h := r.header.Get("WWW-Authenticate"); h != "" {
		t.Fatalf("a key lookup that timed out challenged the caller: WWW-Authenticate %q", h)
	}
	st.set(answer)
	if r := e.do("GET", "/v1/users/nobody", nil, "Authorization", "Bearer hk_wrong"); r.status != http.StatusUnauthorized ||
		r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("a refused key: %d, WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
	}
}

// A body that takes longer to arrive than the store timeout is not store
// time: the request still succeeds (its arrival is bounded by
// read_timeout).
func TestStoreTimeoutExcludesBodyUpload(t *testing.T) {
	t.Parallel()
	e, _ := newStallingEnv(t)
	seedAlice(t, e)
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"user_id": "alice", "type": "order_shipped", `))
		time.Sleep(2 * stallTimeout) // twice the store timeout
		_, _ = pw.Write([]byte(`"title": "Shipped"}`))
		_ = pw.Close()
	}()
	req, err := http.NewRequest("POST", ts.URL+"/v1/notifications", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("slow body: %d %s", res.StatusCode, bytes.TrimSpace(b))
	}
}

// notificationCount counts the deliveries in the store itself (each
// trigger of these tests makes one: alice has one device), past any
// stall.
func (e *env) notificationCount(string) int {
	e.t.Helper()
	counts, err := e.store.CountDeliveries(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
