package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/httpapi"
)

// openStream opens alice's inbox stream with authorization and returns
// its reader after the preamble, or the refusal's status.
func openStream(t *testing.T, ts *httptest.Server, user, authorization string) (*bufio.Reader, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/users/"+user+"/inbox/stream", nil)
	req.Header.Set("Authorization", "Bearer "+authorization)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		return nil, resp.StatusCode
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("preamble %q %v", line, err)
	}
	return br, 200
}

// closeEvent reads the stream until its final close event and returns its
// reason; the stream must then end.
func closeEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended without a close event: %v", err)
		}
		if line != "event: close\n" {
			continue
		}
		data, _ := br.ReadString('\n')
		var end struct{ Reason, Message string }
		if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &end); err != nil || end.Message == "" {
			t.Fatalf("close data %q: %v", data, err)
		}
		_, _ = br.ReadString('\n')
		if _, err := br.ReadString('\n'); err == nil {
			t.Fatal("the stream goes on after its close event")
		}
		return end.Reason
	}
}

func TestInboxStreamClosesWhenTheKeyIsRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{streams: httpapi.StreamConfig{CheckInterval: 20 * time.Millisecond}})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	k, secret, err := e.keys.Create(context.Background(), "streamer", []auth.Scope{auth.ScopeInboxRead})
	if err != nil {
		t.Fatal(err)
	}
	br, _ := openStream(t, ts, "alice", secret)
	if err := e.keys.Revoke(context.Background(), k.ID); err != nil {
		t.Fatal(err)
	}
	if r := closeEvent(t, br); r != "credentials_revoked" {
		t.Fatalf("reason %s", r)
	}
}

func TestInboxStreamClosesWhenTheTokenExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Second).Unix()})
	tok.Header["kid"] = "app1"
	signed, err := tok.SignedString(userTokenSecret)
	if err != nil {
		t.Fatal(err)
	}
	br, _ := openStream(t, ts, "alice", signed)
	if r := closeEvent(t, br); r != "credentials_expired" {
		t.Fatalf("reason %s", r)
	}
}

func TestInboxStreamMaxLifetime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), streams: httpapi.StreamConfig{MaxLifetime: 50 * time.Millisecond}})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	br, _ := openStream(t, ts, "alice", userToken(t, "alice"))
	if r := closeEvent(t, br); r != "max_lifetime" {
		t.Fatalf("reason %s", r)
	}
}

// One stream more than the cap per user, or per key, is 429 naming the
// limit; closing one makes room.
func TestInboxStreamCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), streams: httpapi.StreamConfig{MaxPerUser: 1, MaxPerKey: 2}})
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		e.seedUser(u)
	}
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	openStream(t, ts, "alice", userToken(t, "alice"))
	r := e.do("GET", "/v1/users/alice/inbox/stream", nil, "Authorization", "Bearer "+userToken(t, "alice"))
	if eb := r.errorBody(t); r.status != 429 || !strings.Contains(eb.Message, "limit per user") {
		t.Fatalf("second stream of alice: %d %s", r.status, eb.Message)
	}
	key := e.key(auth.ScopeInboxRead)
	openStream(t, ts, "bob", key)
	if _, st := openStream(t, ts, "bob", key); st != 429 {
		t.Fatalf("second stream of bob by key: %d", st)
	}
	openStream(t, ts, "carol", key)
	r = e.do("GET", "/v1/users/dave/inbox/stream", nil, "Authorization", "Bearer "+key)
	if eb := r.errorBody(t); r.status != 429 || !strings.Contains(eb.Message, "limit per key") {
		t.Fatalf("third stream of the key: %d %s", r.status, eb.Message)
	}
}
