package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/store"
)

// noKeysStore knows no API key, so every key is refused after a lookup.
type noKeysStore struct{ acceptingStore }

func (noKeysStore) GetAPIKey(context.Context, string) (store.APIKey, error) {
	return store.APIKey{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "API key not found")
}

// FuzzAuthorization sends arbitrary Authorization headers and access_token
// query values through the whole server: the answer is a 401 (or 400 for a
// query string that does not parse) — never a 500, never a panic — and the
// credential never comes back in the response. Committed corpus:
// testdata/fuzz/FuzzAuthorization.
func FuzzAuthorization(f *testing.F) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := herald.NewClient(herald.Config{Store: noKeysStore{}, DisableWorkers: true, Logger: discard})
	if err != nil {
		f.Fatal(err)
	}
	keys, err := auth.NewKeys(auth.KeysConfig{Store: noKeysStore{}})
	if err != nil {
		f.Fatal(err)
	}
	tokens, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: []auth.UserTokenKey{{ID: "app1", Algorithm: auth.AlgHS256, Secret: userTokenSecret}}})
	if err != nil {
		f.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Config{Client: c, Logger: discard, Auth: httpapi.AuthConfig{Keys: keys, UserTokens: tokens}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Bearer ", "Bearer hk_", "Bearer hk_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 52), "Basic abc",
		"Bearer a.b.c", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.", "bearer  x", "Bearer \x00"} {
		f.Add(s, "")
	}
	f.Add("", "a.b.c")
	f.Fuzz(func(t *testing.T, header, query string) {
		for _, target := range []string{"GET /v1/users/alice/devices", "POST /v1/tokens/heartbeat",
			"GET /v1/users/alice/inbox/stream?access_token=" + url.QueryEscape(query)} {
			method, path, _ := strings.Cut(target, " ")
			req := httptest.NewRequest(method, path, nil)
			if header != "" {
				req.Header["Authorization"] = []string{header}
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("%s with Authorization %q: %d %s", target, header, rec.Code, rec.Body.Bytes())
			}
			for _, cred := range []string{header, query} {
				if len(cred) > 12 && strings.Contains(rec.Body.String(), cred) {
					t.Fatalf("the response echoes the credential: %s", rec.Body.Bytes())
				}
			}
		}
	})
}
