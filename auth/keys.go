package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// A server API key is the string hk_<id>_<secret>: id is 10 random bytes
// and secret 32 random bytes (256 bits), both in lower-case base32 without
// padding (no characters a shell, a URL or a double-click splits on).
// The id is public — it is what `herald keys list` shows and revoke takes
// — and finds the stored row by primary key; the whole string is then
// compared by its SHA-256 in constant time.
//
// Why SHA-256 and not bcrypt or argon2: slow hashes protect low-entropy
// passwords against guessing after a database leak. A 256-bit random
// secret cannot be guessed however fast the hash is, and a slow hash would
// cost tens of milliseconds of CPU on every API request.
const (
	keyPrefix    = "hk_"
	keyIDBytes   = 10
	keySecBytes  = 32
	keyIDLen     = 16 // base32 of 10 bytes
	keySecretLen = 52 // base32 of 32 bytes, unpadded
	maxNameLen   = 100
	// BootstrapKeyID names the configured bootstrap key in logs.
	BootstrapKeyID = "bootstrap"
	// MinBootstrapKeyLength keeps a configured bootstrap key out of
	// guessing range: 32 characters of base64 or hex is 128+ bits.
	MinBootstrapKeyLength = 32
	maxBootstrapKeyLength = 256
	// DefaultKeyCacheTTL is how long an authenticated key's row is reused
	// without asking the database, and so how long a revocation takes to
	// reach every instance.
	DefaultKeyCacheTTL = 10 * time.Second
	// DefaultNegativeCacheTTL is how long an id the database does not
	// know is answered "not valid" without asking it again (issue 23
	// item 8): a flood of one guessed key costs one query per TTL. Short,
	// because the only cost of a stale entry is that a key created on
	// another instance under that very id — 80 random bits — waits this
	// long.
	DefaultNegativeCacheTTL = 5 * time.Second
	// DefaultNegativeCacheSize bounds the unknown ids remembered, so a
	// flood of random ids cannot grow memory without bound; when full, an
	// arbitrary entry makes room (about 100 bytes each: ~1 MB).
	DefaultNegativeCacheSize = 10000
)

// dummyHash stands in for the stored hash of an id the database does not
// know, so an unknown id costs the same hashing and comparing as a known
// one and the answer's timing does not tell them apart.
const dummyHash = "0000000000000000000000000000000000000000000000000000000000000000"

var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// Key is a server API key as the API and the CLI show it: never the
// secret, never its hash.
type Key struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Scopes    []Scope    `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// KeysConfig configures Keys.
type KeysConfig struct {
	// Store holds the keys. Required.
	Store store.APIKeys
	// Bootstrap is an admin key given by configuration (a file or the
	// environment) instead of the database, so a fresh deployment can be
	// provisioned by its orchestrator. Empty disables it. It must be
	// MinBootstrapKeyLength to 256 characters of [A-Za-z0-9_-], e.g.
	// `openssl rand -hex 32`.
	Bootstrap string
	// CacheTTL: see DefaultKeyCacheTTL (the default); negative disables
	// the cache.
	CacheTTL time.Duration
	// NegativeCacheTTL: see DefaultNegativeCacheTTL (the default);
	// negative disables the negative cache.
	NegativeCacheTTL time.Duration
	// NegativeCacheSize: see DefaultNegativeCacheSize (the default);
	// must not be negative.
	NegativeCacheSize int
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Keys creates, lists, revokes and checks server API keys. It is safe for
// concurrent use.
type Keys struct {
	store     store.APIKeys
	bootstrap [sha256.Size]byte
	hasBoot   bool
	ttl       time.Duration
	now       func() time.Time

	negTTL time.Duration
	negMax int

	mu    sync.Mutex
	cache map[string]cachedKey
	// unknown holds ids the store did not find, until when to believe it.
	unknown      map[string]time.Time
	unknownSwept time.Time
}

type cachedKey struct {
	row   store.APIKey
	until time.Time
}

// NewKeys validates cfg and builds Keys.
func NewKeys(cfg KeysConfig) (*Keys, error) {
	if cfg.Store == nil {
		return nil, errors.New("auth: KeysConfig.Store is required")
	}
	if cfg.NegativeCacheSize < 0 {
		return nil, errors.New("auth: KeysConfig.NegativeCacheSize must not be negative")
	}
	k := &Keys{store: cfg.Store, ttl: cfg.CacheTTL, negTTL: cfg.NegativeCacheTTL, negMax: cfg.NegativeCacheSize,
		now: cfg.Now, cache: map[string]cachedKey{}, unknown: map[string]time.Time{}}
	if k.ttl == 0 {
		k.ttl = DefaultKeyCacheTTL
	}
	if k.negTTL == 0 {
		k.negTTL = DefaultNegativeCacheTTL
	}
	if k.negMax == 0 {
		k.negMax = DefaultNegativeCacheSize
	}
	if k.now == nil {
		k.now = time.Now
	}
	if cfg.Bootstrap != "" {
		if err := validBootstrap(cfg.Bootstrap); err != nil {
			return nil, err
		}
		k.bootstrap, k.hasBoot = sha256.Sum256([]byte(cfg.Bootstrap)), true
	}
	return k, nil
}

// validBootstrap checks a configured key without ever printing it.
func validBootstrap(s string) error {
	if len(s) < MinBootstrapKeyLength || len(s) > maxBootstrapKeyLength {
		return fmt.Errorf("auth: the bootstrap API key must be %d to %d characters long (it has %d); generate one with `openssl rand -hex 32`",
			MinBootstrapKeyLength, maxBootstrapKeyLength, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return errors.New("auth: the bootstrap API key may only contain letters, digits, '_' and '-'")
		}
	}
	return nil
}

// HasBootstrap reports whether a bootstrap key is configured.
func (k *Keys) HasBootstrap() bool { return k.hasBoot }

// Configured reports whether anyone can call the API: a bootstrap key is
// set or at least one key in the database is not revoked.
func (k *Keys) Configured(ctx context.Context) (bool, error) {
	if k.hasBoot {
		return true, nil
	}
	n, err := k.store.CountActiveAPIKeys(ctx)
	return n > 0, err
}

// Create makes a new key and returns it with the key string, which is
// shown to the caller this once and stored only as a hash.
func (k *Keys) Create(ctx context.Context, name string, scopes []Scope) (Key, string, error) {
	if err := validName(name); err != nil {
		return Key{}, "", err
	}
	if len(scopes) == 0 {
		return Key{}, "", heraldtype.FieldErrorf("scopes", "at least one scope is required")
	}
	names := make([]string, len(scopes))
	for i, s := range scopes {
		if !s.Valid() {
			return Key{}, "", heraldtype.FieldErrorf("scopes", "unknown scope %q", s)
		}
		names[i] = string(s)
	}
	var idb [keyIDBytes]byte
	var sec [keySecBytes]byte
	_, _ = rand.Read(idb[:]) // crypto/rand.Read never fails (Go 1.24+).
	_, _ = rand.Read(sec[:])
	id := strings.ToLower(keyEncoding.EncodeToString(idb[:]))
	secret := keyPrefix + id + "_" + strings.ToLower(keyEncoding.EncodeToString(sec[:]))
	row := store.APIKey{ID: id, Name: name, Hash: hashKey(secret), Scopes: names, CreatedAt: k.now().UTC()}
	if err := k.store.CreateAPIKey(ctx, row); err != nil {
		return Key{}, "", err
	}
	k.mu.Lock()
	delete(k.unknown, id)
	k.mu.Unlock()
	return toKey(row), secret, nil
}

func validName(name string) error {
	if name == "" {
		return heraldtype.FieldErrorf("name", "is required")
	}
	if len(name) > maxNameLen || !utf8.ValidString(name) {
		return heraldtype.FieldErrorf("name", "must be valid UTF-8 of at most %d bytes", maxNameLen)
	}
	for _, r := range name {
		if heraldtype.Unprintable(r) {
			return heraldtype.FieldErrorf("name", "must not contain control, format or bidi characters")
		}
	}
	return nil
}

// List returns every key, revoked ones included, oldest first.
func (k *Keys) List(ctx context.Context) ([]Key, error) {
	rows, err := k.store.ListAPIKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(rows))
	for i, r := range rows {
		out[i] = toKey(r)
	}
	return out, nil
}

// Revoke revokes a key by id; it stops working on this instance at once
// and on others within the cache TTL.
func (k *Keys) Revoke(ctx context.Context, id string) error {
	if !validKeyID(id) {
		return heraldtype.FieldErrorf("id", "is not an API key id (16 characters a-z, 2-7)")
	}
	if err := k.store.RevokeAPIKey(ctx, id, k.now().UTC()); err != nil {
		return err
	}
	k.mu.Lock()
	delete(k.cache, id)
	k.mu.Unlock()
	return nil
}

// errBadKey is the one answer for a key that is malformed, unknown or has
// the wrong secret: telling them apart would help someone probing ids.
var errBadKey = heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "the API key is not valid")

// Authenticate returns the key that token (the bearer credential) is, or
// an unauthenticated error. A database failure is returned as is.
func (k *Keys) Authenticate(ctx context.Context, token string) (Key, error) {
	if k.hasBoot {
		sum := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(sum[:], k.bootstrap[:]) == 1 {
			return bootstrapKey(), nil
		}
	}
	id, ok := parseKey(token)
	if !ok {
		return Key{}, errBadKey
	}
	row, err := k.lookup(ctx, id)
	found := err == nil
	if err != nil && !isNotFound(err) {
		return Key{}, fmt.Errorf("auth: look up API key %s: %w", id, err)
	}
	if !found {
		row.Hash = dummyHash // hash and compare all the same: see dummyHash
	}
	want, err := hex.DecodeString(row.Hash)
	got := sha256.Sum256([]byte(token))
	if match := err == nil && subtle.ConstantTimeCompare(got[:], want) == 1; !match || !found {
		return Key{}, errBadKey
	}
	if row.RevokedAt != nil {
		return Key{}, heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "the API key %s was revoked", id)
	}
	return toKey(row), nil
}

// ByID returns the key with this id, revoked or not (RevokedAt says), or
// ENOTFOUND. It reads through the same cache as Authenticate, so it costs
// a database query at most once per cache TTL and a revocation reaches
// it as it reaches the API: at once on this instance, within the TTL on
// the others. BootstrapKeyID answers the bootstrap key while one is
// configured. A console session re-checks its key with it (sessions.go).
func (k *Keys) ByID(ctx context.Context, id string) (Key, error) {
	if id == BootstrapKeyID {
		if !k.hasBoot {
			return Key{}, errUnknownKey
		}
		return bootstrapKey(), nil
	}
	if !validKeyID(id) {
		return Key{}, errUnknownKey
	}
	row, err := k.lookup(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return Key{}, errUnknownKey
		}
		return Key{}, fmt.Errorf("auth: look up API key %s: %w", id, err)
	}
	return toKey(row), nil
}

// bootstrapKey is the configured bootstrap key as the API sees it.
func bootstrapKey() Key {
	return Key{ID: BootstrapKeyID, Name: BootstrapKeyID, Scopes: []Scope{ScopeAdmin}}
}

// bootstrapFingerprint names the configured bootstrap key without
// revealing it: a console session made with the bootstrap key records it,
// so changing the key ends the sessions made with the old one (the id,
// "bootstrap", stays the same). It is a hash of the key's hash under a
// label of its own, so it equals nothing else Herald stores; "" when no
// bootstrap key is configured.
func (k *Keys) bootstrapFingerprint() string {
	if !k.hasBoot {
		return ""
	}
	sum := sha256.Sum256(append([]byte("herald console session bootstrap key\x00"), k.bootstrap[:]...))
	return hex.EncodeToString(sum[:16])
}

func isNotFound(err error) bool {
	var he *heraldtype.Error
	return errors.As(err, &he) && he.Code == heraldtype.ENOTFOUND
}

// errUnknownKey is what lookup answers for an id remembered as unknown.
var errUnknownKey = heraldtype.Errorf(heraldtype.ENOTFOUND, "API key not found")

// lookup reads a key's row, from the cache while it is fresh. Rows that
// exist are cached for the TTL; ids that do not for the negative TTL, in
// a map of bounded size, so garbage ids cannot grow memory.
func (k *Keys) lookup(ctx context.Context, id string) (store.APIKey, error) {
	now := k.now()
	k.mu.Lock()
	c, ok := k.cache[id]
	until, unknown := k.unknown[id]
	k.mu.Unlock()
	if k.ttl > 0 && ok && now.Before(c.until) {
		return c.row, nil
	}
	if k.negTTL > 0 && unknown && now.Before(until) {
		return store.APIKey{}, errUnknownKey
	}
	row, err := k.store.GetAPIKey(ctx, id)
	if isNotFound(err) && k.negTTL > 0 {
		k.rememberUnknown(id, now)
	}
	if err != nil {
		return store.APIKey{}, err
	}
	if k.ttl > 0 {
		k.mu.Lock()
		k.cache[id] = cachedKey{row: row, until: now.Add(k.ttl)}
		k.mu.Unlock()
	}
	return row, nil
}

// rememberUnknown notes that the store does not know id. When the map is
// full, expired entries go first (a scan at most once per negative TTL,
// so a flood does not pay it on every id), then one arbitrary entry (Go's
// map order): under a flood of random ids every entry is as good as
// another.
func (k *Keys) rememberUnknown(id string, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.unknown) >= k.negMax && now.Sub(k.unknownSwept) >= k.negTTL {
		for other, until := range k.unknown {
			if !now.Before(until) {
				delete(k.unknown, other)
			}
		}
		k.unknownSwept = now
	}
	if len(k.unknown) >= k.negMax {
		for other := range k.unknown {
			delete(k.unknown, other)
			break
		}
	}
	k.unknown[id] = now.Add(k.negTTL)
}

// parseKey returns the id of a well-formed key string.
func parseKey(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, keyPrefix)
	if !ok || len(rest) != keyIDLen+1+keySecretLen || rest[keyIDLen] != '_' {
		return "", false
	}
	id, secret := rest[:keyIDLen], rest[keyIDLen+1:]
	if !validKeyID(id) || !isBase32(secret) {
		return "", false
	}
	return id, true
}

// IsKeyFormat reports whether token has the shape of a server API key
// (hk_…); the HTTP API uses it to tell keys from user tokens.
func IsKeyFormat(token string) bool { return strings.HasPrefix(token, keyPrefix) }

func validKeyID(id string) bool { return len(id) == keyIDLen && isBase32(id) }

func isBase32(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func toKey(r store.APIKey) Key {
	scopes := make([]Scope, len(r.Scopes))
	for i, s := range r.Scopes {
		scopes[i] = Scope(s)
	}
	return Key{ID: r.ID, Name: r.Name, Scopes: scopes, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt}
}
