package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/httpapi"
)

// rawRequest sends head (a request line and headers, without the blank
// line) and then only part of a body of contentLength bytes, and returns
// the connection for reading the answer. The rest of the body never comes.
func rawRequest(t *testing.T, addr, head string, contentLength int, part string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "%s\r\nHost: herald\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", head, contentLength, part)
	return c, bufio.NewReader(c)
}

// readAnswer reads one response within limit; a server that waits for the
// body it will never get does not answer in time.
func readAnswer(t *testing.T, c net.Conn, br *bufio.Reader, limit time.Duration) (*http.Response, httpapi.ErrorBody) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", limit, err)
	}
	defer resp.Body.Close()
	var eb httpapi.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
		t.Fatalf("error body: %v", err)
	}
	return resp, eb
}

// A stranger's slow body is never waited for: the 401 comes at once, and
// the connection is closed instead of read to the end of the body.
func TestStrangerIsRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close) // after the connections close (cleanups run last first)
	addr := strings.TrimPrefix(ts.URL, "http://")
	for name, auth := range map[string]string{
		"no key":    "",
		"wrong key": "Authorization: Bearer hk_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n",
	} {
		head := "POST /v1/notifications HTTP/1.1\r\n" + strings.TrimSuffix(auth, "\r\n")
		head = strings.TrimSuffix(head, "\r\n")
		c, br := rawRequest(t, addr, head, 1000, `{"type":`)
		resp, eb := readAnswer(t, c, br, 5*time.Second)
		if resp.StatusCode != 401 || eb.Code != "unauthenticated" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, eb.Code)
		}
		if !resp.Close {
			t.Errorf("%s: the connection is kept open for a body nobody will read", name)
		}
	}
}

// A caller with a good key whose body does not arrive within the read
// timeout gets 408 request_timeout naming the limit.
func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{readTimeout: 200 * time.Millisecond})
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close) // after the connections close (cleanups run last first)
	c, br := rawRequest(t, strings.TrimPrefix(ts.URL, "http://"),
		"POST /v1/notifications HTTP/1.1\r\nAuthorization: Bearer "+e.adminKey, 1000, `{"type":`)
	resp, eb := readAnswer(t, c, br, 5*time.Second)
	if resp.StatusCode != http.StatusRequestTimeout || eb.Code != httpapi.ERequestTimeout ||
		!strings.Contains(eb.Message, "200ms") {
		t.Fatalf("%d %s %q", resp.StatusCode, eb.Code, eb.Message)
	}
}

// The inbox stream outlives the request read and write timeouts: it is
// exempt from them, its heartbeats keep coming.
func TestInboxStreamIsExemptFromRequestTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t), readTimeout: 50 * time.Millisecond,
		writeTimeout: 50 * time.Millisecond, heartbeat: 100 * time.Millisecond})
	e.seedUser("alice")
	ts := httptest.NewServer(e.h)
	t.Cleanup(ts.Close)
	req, _ := http.NewRequest("GET", ts.URL+"/v1/users/alice/inbox/stream", nil)
	req.Header.Set("Authorization", "Bearer "+userToken(t, "alice"))
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	start := time.Now()
	for beats := 0; beats < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %s: %v", time.Since(start), err)
		}
		if strings.HasPrefix(line, ": heartbeat") {
			beats++
		}
	}
}
