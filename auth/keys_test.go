package auth_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// memKeys is store.APIKeys in memory; the real stores pass the same
// contract in store/storetest. It counts lookups to observe the cache.
type memKeys struct {
	mu      sync.Mutex
	rows    map[string]store.APIKey
	gets    int
	failGet error
}

func newMemKeys() *memKeys { return &memKeys{rows: map[string]store.APIKey{}} }

func (m *memKeys) CreateAPIKey(_ context.Context, k store.APIKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.rows[k.ID]; ok {
		return heraldtype.Errorf(heraldtype.ECONFLICT, "exists")
	}
	m.rows[k.ID] = k
	return nil
}

func (m *memKeys) GetAPIKey(_ context.Context, id string) (store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	if m.failGet != nil {
		return store.APIKey{}, m.failGet
	}
	k, ok := m.rows[id]
	if !ok {
		return store.APIKey{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "API key not found")
	}
	return k, nil
}

func (m *memKeys) ListAPIKeys(context.Context) ([]store.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.APIKey
	for _, k := range m.rows {
		out = append(out, k)
	}
	return out, nil
}

func (m *memKeys) RevokeAPIKey(_ context.Context, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.rows[id]
	if !ok {
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "API key not found")
	}
	if k.RevokedAt == nil {
		k.RevokedAt = &now
	}
	m.rows[id] = k
	return nil
}

func (m *memKeys) CountActiveAPIKeys(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, k := range m.rows {
		if k.RevokedAt == nil {
			n++
		}
	}
	return n, nil
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// clock is a settable clock for the cache TTL.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestKeysCreateAuthenticateRevoke(t *testing.T) {
	ctx := context.Background()
	st := newMemKeys()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := keys.Configured(ctx); err != nil || ok {
		t.Fatalf("Configured on an empty store = %v, %v", ok, err)
	}
	k, secret, err := keys.Create(ctx, "ci", []auth.Scope{auth.ScopeNotificationsWrite})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "hk_"+k.ID+"_") || len(secret) != 3+16+1+52 {
		t.Fatalf("key string %q does not have the form hk_<id>_<secret>", secret)
	}
	// Only the hash is stored.
	row := st.rows[k.ID]
	if strings.Contains(row.Hash, secret[20:]) || row.Hash == secret || len(row.Hash) != 64 {
		t.Fatalf("stored hash %q", row.Hash)
	}
	if ok, _ := keys.Configured(ctx); !ok {
		t.Fatal("Configured is false with an active key")
	}
	got, err := keys.Authenticate(ctx, secret)
	if err != nil || got.ID != k.ID || !auth.Grants(got.Scopes, auth.ScopeNotificationsWrite) || auth.Grants(got.Scopes, auth.ScopeUsersRead) {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}

	// A wrong secret with the right id, a truncated key, garbage: all the
	// same answer.
	wrong := secret[:len(secret)-1] + map[bool]string{true: "b", false: "a"}[secret[len(secret)-1] == 'a']
	for _, bad := range []string{wrong, secret[:30], "hk_", "", "Bearer " + secret, strings.ToUpper(secret), "hk_" + k.ID + "_" + strings.Repeat("a", 52) + "x"} {
		_, err := keys.Authenticate(ctx, bad)
		wantCode(t, err, heraldtype.EUNAUTHENTICATED)
		if strings.Contains(err.Error(), secret[20:]) {
			t.Fatalf("the error echoes the secret: %v", err)
		}
	}

	// The row is cached: a second authentication within the TTL does not
	// ask the store.
	before := st.gets
	if _, err := keys.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if st.gets != before {
		t.Fatalf("a fresh cached key asked the store again")
	}
	if err := keys.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = keys.Authenticate(ctx, secret)
	wantCode(t, err, heraldtype.EUNAUTHENTICATED)
	if !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("revoked key: %v", err)
	}
	wantCode(t, keys.Revoke(ctx, "nope"), heraldtype.EINVALID)
	list, err := keys.List(ctx)
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
		t.Fatalf("List = %+v, %v", list, err)
	}

	// A database failure is not "unauthenticated": it must not look like
	// the caller's fault.
	st.failGet = errors.New("db down")
	_, other, _ := keys.Create(ctx, "x", []auth.Scope{auth.ScopeAdmin})
	if _, err := keys.Authenticate(ctx, other); err == nil || errors.As(err, new(*heraldtype.Error)) {
		t.Fatalf("store failure = %v, want a plain error", err)
	}
}

// A revocation on another instance reaches this one when the cache entry
// expires.
func TestKeysCacheTTL(t *testing.T) {
	ctx := context.Background()
	st := newMemKeys()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	keys, _ := auth.NewKeys(auth.KeysConfig{Store: st, Now: clk.Now, CacheTTL: time.Minute})
	other, _ := auth.NewKeys(auth.KeysConfig{Store: st, Now: clk.Now})
	k, secret, _ := keys.Create(ctx, "ci", []auth.Scope{auth.ScopeAdmin})
	if _, err := keys.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := other.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Authenticate(ctx, secret); err != nil {
		t.Fatalf("within the TTL the cached row still answers: %v", err)
	}
	clk.Add(time.Minute)
	_, err := keys.Authenticate(ctx, secret)
	wantCode(t, err, heraldtype.EUNAUTHENTICATED)
}

func TestBootstrapKey(t *testing.T) {
	ctx := context.Background()
	boot := strings.Repeat("ab12", 10)
	keys, err := auth.NewKeys(auth.KeysConfig{Store: newMemKeys(), Bootstrap: boot})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := keys.Configured(ctx); !ok {
		t.Fatal("a bootstrap key counts as configured")
	}
	k, err := keys.Authenticate(ctx, boot)
	if err != nil || k.ID != auth.BootstrapKeyID || !auth.Grants(k.Scopes, auth.ScopeDeliveriesAdmin) {
		t.Fatalf("bootstrap = %+v, %v", k, err)
	}
	_, err = keys.Authenticate(ctx, boot+"x")
	wantCode(t, err, heraldtype.EUNAUTHENTICATED)
	for _, bad := range []string{"short", strings.Repeat("a", 31), strings.Repeat("a.", 20), strings.Repeat("x", 300)} {
		_, err := auth.NewKeys(auth.KeysConfig{Store: newMemKeys(), Bootstrap: bad})
		if err == nil {
			t.Errorf("bootstrap key %q accepted", bad)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("the error echoes the key: %v", err)
		}
	}
}

func TestParseScopes(t *testing.T) {
	got, err := auth.ParseScopes([]string{"users:write,notifications:write", "users:write", " admin "})
	if err != nil || len(got) != 3 || got[0] != auth.ScopeAdmin {
		t.Fatalf("ParseScopes = %v, %v", got, err)
	}
	for _, bad := range [][]string{nil, {""}, {"users:delete"}, {"ADMIN"}} {
		if _, err := auth.ParseScopes(bad); err == nil {
			t.Errorf("ParseScopes(%q) accepted", bad)
		}
	}
	ctx := context.Background()
	keys, _ := auth.NewKeys(auth.KeysConfig{Store: newMemKeys()})
	for name, scopes := range map[string][]auth.Scope{"": {auth.ScopeAdmin}, "x\n": {auth.ScopeAdmin}, "none": nil, "bad": {"nope"}, strings.Repeat("n", 101): {auth.ScopeAdmin}} {
		_, _, err := keys.Create(ctx, name, scopes)
		wantCode(t, err, heraldtype.EINVALID)
	}
}

// Issue 23 item 8: a well-formed but unknown key id asks the store once
// per negative TTL, not once per request; the negative cache holds at
// most NegativeCacheSize ids however many are tried; and a key created
// under a remembered id works at once.
func TestKeysNegativeCache(t *testing.T) {
	ctx := context.Background()
	st := newMemKeys()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st, Now: clk.Now, NegativeCacheTTL: 2 * time.Second, NegativeCacheSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	guess := func(i int) string {
		id := []byte("aaaaaaaaaaaaaaaa")
		id[0], id[1] = 'a'+byte(i%26), 'a'+byte(i/26%26)
		return "hk_" + string(id) + "_" + strings.Repeat("a", 52)
	}
	for range 5 {
		_, err := keys.Authenticate(ctx, guess(0))
		wantCode(t, err, heraldtype.EUNAUTHENTICATED)
	}
	if st.gets != 1 {
		t.Fatalf("5 tries of one unknown id asked the store %d times, want 1", st.gets)
	}
	clk.Add(2 * time.Second)
	_, err = keys.Authenticate(ctx, guess(0))
	wantCode(t, err, heraldtype.EUNAUTHENTICATED)
	if st.gets != 2 {
		t.Fatalf("after the negative TTL the store was asked %d times in all, want 2", st.gets)
	}

	// A flood of distinct ids: each is asked once, the cache stays
	// bounded, and every answer is the same "not valid".
	for i := 1; i <= 100; i++ {
		_, err := keys.Authenticate(ctx, guess(i))
		wantCode(t, err, heraldtype.EUNAUTHENTICATED)
	}
	if n := auth.UnknownKeysCached(keys); n > 3 {
		t.Fatalf("the negative cache holds %d ids, want at most 3", n)
	}

	if _, err := auth.NewKeys(auth.KeysConfig{Store: st, NegativeCacheSize: -1}); err == nil {
		t.Fatal("a negative NegativeCacheSize was accepted")
	}
}
