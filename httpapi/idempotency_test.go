package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

type triggerAnswer struct {
	ID            string `json:"id"`
	Notifications []struct {
		ID string `json:"id"`
	} `json:"notifications"`
	Replayed bool `json:"replayed"`
}

// The API idempotency layer (S0.5, DESIGN "Idempotency, layer by layer"):
// the same key and body replay the original answer with 200; another body
// is a 409; the key may come in the header or the body.
func TestIdempotentReplayAndConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	body := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Shipped"}

	var first, again, viaField triggerAnswer
	r := e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-1")
	r.expect(t, http.StatusAccepted, &first)

	r = e.do("POST", "/v1/notifications", body, "Idempotency-Key", "order-1")
	r.expect(t, http.StatusOK, &again)
	if !again.Replayed || again.ID != first.ID || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay = %+v, header %q; first %+v", again, r.header.Get("Idempotent-Replayed"), first)
	}
	if r.header.Get("Location") != "/v1/notifications/"+first.ID {
		t.Errorf("replay Location = %q", r.header.Get("Location"))
	}

	// The key in the body, or quoted in the header (IETF draft form), is the same key.
	withField := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Shipped", "idempotency_key": "order-1"}
	e.do("POST", "/v1/notifications", withField).expect(t, http.StatusOK, &viaField)
	if viaField.ID != first.ID {
		t.Fatalf("key in the body gave %s, want %s", viaField.ID, first.ID)
	}
	e.do("POST", "/v1/notifications", withField, "Idempotency-Key", `"order-1"`).expect(t, http.StatusOK, nil)

	changed := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Delivered"}
	r = e.do("POST", "/v1/notifications", changed, "Idempotency-Key", "order-1")
	if r.status != http.StatusConflict || r.errorBody(t).Code != heraldtype.ECONFLICT {
		t.Fatalf("same key, other body: %d %s", r.status, r.body)
	}

	var st struct {
		Deliveries []heraldtype.Delivery `json:"deliveries"`
	}
	e.do("GET", "/v1/notifications/"+first.ID, nil).expect(t, 200, &st)
	if len(st.Deliveries) != 1 {
		t.Fatalf("replays created deliveries: %d", len(st.Deliveries))
	}
}

// Twenty identical triggers racing with one key make exactly one
// notification; every caller learns its id (S1.2: first writer wins).
func TestConcurrentTriggersWithOneKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)

	body, err := json.Marshal(map[string]any{"user_id": "alice", "type": "flash_sale", "title": "Now"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	type result struct {
		status int
		answer triggerAnswer
		err    error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			req, err := http.NewRequest("POST", ts.URL+"/v1/notifications", bytes.NewReader(body))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "sale-2026-05-01")
			req.Header.Set("Authorization", "Bearer "+e.adminKey)
			resp, err := ts.Client().Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			results[i].status, results[i].err = resp.StatusCode, err
			if err == nil {
				results[i].err = json.Unmarshal(b, &results[i].answer)
			}
			if resp.StatusCode >= 300 {
				t.Errorf("request %d: %d %s", i, resp.StatusCode, b)
			}
		})
	}
	close(start)
	wg.Wait()

	ids := map[string]bool{}
	accepted := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if r.status == http.StatusAccepted {
			accepted++
		}
		ids[r.answer.ID] = true
	}
	if len(ids) != 1 || ids[""] {
		t.Fatalf("notification ids across responses: %v", ids)
	}
	if accepted != 1 {
		t.Errorf("%d answers were 202 Accepted; exactly one trigger should be new", accepted)
	}
	var page struct {
		Deliveries []heraldtype.Delivery `json:"deliveries"`
	}
	e.do("GET", "/v1/deliveries?user_id=alice", nil).expect(t, 200, &page)
	if len(page.Deliveries) != 1 {
		t.Fatalf("%d deliveries for alice, want 1", len(page.Deliveries))
	}
}

// Idempotency keys belong to their caller (issue 23): two API keys using
// the same Idempotency-Key each get their own notification, whatever the
// body. Neither learns of the other's key (no 409), reads its notification
// back (no replay), or blocks its trigger by claiming the key first; each
// key still replays its own.
func TestIdempotencyKeysPerAPIKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	e.seedUser("bob")
	backendA := "Bearer " + e.key(auth.ScopeNotificationsWrite)
	backendB := "Bearer " + e.key(auth.ScopeNotificationsWrite)
	bodyA := map[string]any{"user_id": "alice", "type": "order_shipped", "title": "Shipped"}
	bodyB := map[string]any{"user_id": "bob", "type": "order_shipped", "title": "Refunded"}

	var a, b, bSame, aAgain triggerAnswer
	e.do("POST", "/v1/notifications", bodyA, "Idempotency-Key", "order-1001", "Authorization", backendA).
		expect(t, http.StatusAccepted, &a)
	// Another body under B's key: not a 409 telling B that A used the key.
	e.do("POST", "/v1/notifications", bodyB, "Idempotency-Key", "order-1001", "Authorization", backendB).
		expect(t, http.StatusAccepted, &b)
	// A's very body under B's key: not A's notification replayed to B.
	var third triggerAnswer
	e.do("POST", "/v1/notifications", bodyA, "Idempotency-Key", "order-1002", "Authorization", backendA).
		expect(t, http.StatusAccepted, &third)
	e.do("POST", "/v1/notifications", bodyA, "Idempotency-Key", "order-1002", "Authorization", backendB).
		expect(t, http.StatusAccepted, &bSame)
	if b.Replayed || bSame.Replayed || b.ID == a.ID || bSame.ID == third.ID {
		t.Fatalf("B's triggers %+v and %+v crossed A's %+v and %+v", b, bSame, a, third)
	}
	// Each key still replays its own trigger.
	r := e.do("POST", "/v1/notifications", bodyA, "Idempotency-Key", "order-1001", "Authorization", backendA)
	r.expect(t, http.StatusOK, &aAgain)
	if !aAgain.Replayed || aAgain.ID != a.ID {
		t.Fatalf("A's retry = %+v, want %s replayed", aAgain, a.ID)
	}
	var bAgain triggerAnswer
	e.do("POST", "/v1/notifications", bodyB, "Idempotency-Key", "order-1001", "Authorization", backendB).
		expect(t, http.StatusOK, &bAgain)
	if !bAgain.Replayed || bAgain.ID != b.ID {
		t.Fatalf("B's retry = %+v, want %s replayed", bAgain, b.ID)
	}
	// Within one key, another body is still a conflict.
	r = e.do("POST", "/v1/notifications", bodyB, "Idempotency-Key", "order-1001", "Authorization", backendA)
	if r.status != http.StatusConflict {
		t.Fatalf("A's key with another body: %d %s", r.status, r.body)
	}
}
