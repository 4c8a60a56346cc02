package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// messagingScope is the OAuth2 scope FCM HTTP v1 requires.
const messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

// fcmSender is a plain FCM HTTP v1 client: net/http, encoding/json and an
// x/oauth2 token source built from a service-account JSON file, as a Go
// team writing its own worker would build it (no Firebase Admin SDK).
type fcmSender struct {
	http    *http.Client
	sendURL string
}

// newFCMSender reads the service-account JSON at credentialsFile and sends
// to endpoint (https://fcm.googleapis.com in production, the emulator here).
// The token source is x/oauth2's JWT flow (assertion → token_uri), cached and
// refreshed by oauth2.ReuseTokenSource; the transport keeps up to
// maxConns idle connections to the one host so that the workers reuse them.
func newFCMSender(ctx context.Context, endpoint, credentialsFile string, maxConns int) (*fcmSender, error) {
	b, err := os.ReadFile(credentialsFile)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	var acct struct {
		ProjectID string `json:"project_id"`
	}
	if err := json.Unmarshal(b, &acct); err != nil || acct.ProjectID == "" {
		return nil, errors.New("credentials: no project_id in the service-account JSON")
	}
	conf, err := google.JWTConfigFromJSON(b, messagingScope)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = maxConns
	tr.MaxIdleConnsPerHost = maxConns
	base := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	// The token exchange uses the same transport (oauth2.HTTPClient).
	ts := conf.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, base))
	return &fcmSender{
		http: &http.Client{
			Transport: &oauth2.Transport{Source: oauth2.ReuseTokenSource(nil, ts), Base: tr},
			Timeout:   30 * time.Second,
		},
		sendURL: strings.TrimSuffix(endpoint, "/") + "/v1/projects/" + acct.ProjectID + "/messages:send",
	}, nil
}

type fcmRequest struct {
	Message fcmMessage `json:"message"`
}

type fcmMessage struct {
	Token        string            `json:"token"`
	Notification *fcmNotification  `json:"notification,omitempty"`
	Data         map[string]string `json:"data,omitempty"`
	Android      *fcmAndroid       `json:"android,omitempty"`
}

type fcmNotification struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

type fcmAndroid struct {
	Priority string `json:"priority,omitempty"`
	TTL      string `json:"ttl,omitempty"`
}

// errPermanent marks an answer that retrying cannot fix (invalid or
// unregistered token, bad request): the worker cancels the job.
var errPermanent = errors.New("permanent FCM error")

// send posts one message and returns nil on 200.
func (s *fcmSender) send(ctx context.Context, msg fcmMessage) error {
	body, err := json.Marshal(fcmRequest{Message: msg})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.sendURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	err = fmt.Errorf("fcm: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(out))
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusForbidden:
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	return err // 401 (token), 429, 5xx: River retries with its backoff
}

// warmToken fetches (and caches) the OAuth2 access token.
func (s *fcmSender) warmToken(ctx context.Context) error {
	_, err := s.http.Transport.(*oauth2.Transport).Source.Token()
	return err
}
