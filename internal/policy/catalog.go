package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// TypeStore reads the types declared through the API.
type TypeStore interface {
	GetType(ctx context.Context, name string) (heraldtype.NotificationType, error)
	ListTypes(ctx context.Context) ([]heraldtype.NotificationType, error)
}

// Catalog resolves notification types: a type stored through the API
// (PUT /v1/types/{type}) wins over one declared in the configuration file,
// which wins over the defaults. Unknown types are accepted with the
// defaults (DefaultType), which keep the behaviour Herald had before it
// had a policy: no cap, and only what a user asked for (preferences,
// quiet hours) or a trigger asked for (a dedupe key) applies.
type Catalog struct {
	static map[string]heraldtype.NotificationType
	store  TypeStore

	// cache keeps resolved types for typeCacheTTL: the dispatcher asks for
	// the type of every delivery it sends, and types change rarely. A type
	// changed through the API applies on this instance at once (Forget)
	// and on others within the TTL.
	mu    sync.Mutex
	cache map[string]cachedType

	// onDeclared, if set, learns every declared type the catalog resolves
	// (OnDeclared).
	onDeclared func(name string)
}

type cachedType struct {
	t       heraldtype.NotificationType
	expires time.Time
}

// typeCacheTTL bounds how stale a type another instance changed may be.
const typeCacheTTL = 2 * time.Second

// maxCachedTypes bounds the cache: type names come from triggers.
const maxCachedTypes = 10000

// NewCatalog validates the configured types and returns a Catalog.
func NewCatalog(static map[string]heraldtype.NotificationType, st TypeStore) (*Catalog, error) {
	if st == nil {
		return nil, errors.New("policy: NewCatalog needs a TypeStore")
	}
	c := &Catalog{static: make(map[string]heraldtype.NotificationType, len(static)), store: st}
	for name, t := range static {
		t.Name = name
		if err := NormalizeType(&t); err != nil {
			return nil, fmt.Errorf("policy: type %q: %w", name, err)
		}
		c.static[name] = t
	}
	return c, nil
}

// DefaultType is the configuration of a type nobody declared: push,
// NORMAL, a 1 h dedupe window, quiet hours respected, at_least_once, not
// critical, and counted toward the daily cap as a type that does not say
// is: when a rule or a campaign produced the notification, not when a
// trigger did, because Herald cannot tell a triggered marketing nudge
// from a password reset.
func DefaultType(name string) heraldtype.NotificationType {
	return heraldtype.NotificationType{Name: name, Priority: heraldtype.PriorityNormal, DedupeWindow: DefaultDedupeWindow,
		QuietHours: true, Guarantee: heraldtype.AtLeastOnce}
}

// NormalizeType validates t and fills its defaults (priority NORMAL,
// window 1 h, at_least_once).
func NormalizeType(t *heraldtype.NotificationType) error {
	if t.Priority == "" {
		t.Priority = heraldtype.PriorityNormal
	}
	if !t.Priority.Valid() {
		return heraldtype.FieldErrorf("priority", "must be LOW, NORMAL or HIGH")
	}
	if t.Guarantee == "" {
		t.Guarantee = heraldtype.AtLeastOnce
	}
	if !t.Guarantee.Valid() {
		return heraldtype.FieldErrorf("guarantee", "%q must be at_least_once or at_most_once", t.Guarantee)
	}
	switch {
	case t.DedupeWindow == 0:
		t.DedupeWindow = DefaultDedupeWindow
	case t.DedupeWindow < time.Second || t.DedupeWindow > 31*24*time.Hour:
		return heraldtype.FieldErrorf("dedupe_window", "must be between 1s and 31 days, got %s", t.DedupeWindow)
	}
	seen := map[heraldtype.Channel]bool{}
	for _, ch := range t.Channels {
		if !validChannel(ch) {
			return heraldtype.FieldErrorf("channels", "unknown channel %q (known: push, sms, email, in_app)", ch)
		}
		if seen[ch] {
			return heraldtype.FieldErrorf("channels", "%q is listed twice", ch)
		}
		seen[ch] = true
	}
	return nil
}

func validChannel(ch heraldtype.Channel) bool {
	switch ch {
	case heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp:
		return true
	}
	return false
}

// Type returns the effective configuration of a type.
func (c *Catalog) Type(ctx context.Context, name string) (heraldtype.NotificationType, error) {
	now := time.Now()
	c.mu.Lock()
	if e, ok := c.cache[name]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.t, nil
	}
	c.mu.Unlock()
	t, err := c.resolve(ctx, name)
	if err != nil {
		return t, err
	}
	c.mu.Lock()
	if c.cache == nil || len(c.cache) >= maxCachedTypes {
		c.cache = map[string]cachedType{}
	}
	c.cache[name] = cachedType{t: t, expires: now.Add(typeCacheTTL)}
	c.mu.Unlock()
	return t, nil
}

// OnDeclared registers f to learn the name of every declared type: the
// configured ones at once, and each type stored through the API when the
// catalog first resolves it (a trigger of that type). Herald's metrics
// use it to give declared types, and only those, their own label value.
// Call it before the catalog is used.
func (c *Catalog) OnDeclared(f func(name string)) {
	c.onDeclared = f
	for name := range c.static {
		f(name)
	}
}

// Forget drops a type from the cache after it changed.
func (c *Catalog) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cache, name)
}

func (c *Catalog) resolve(ctx context.Context, name string) (heraldtype.NotificationType, error) {
	t, err := c.store.GetType(ctx, name)
	if err == nil {
		if c.onDeclared != nil {
			c.onDeclared(name)
		}
		return t, nil
	}
	if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		return heraldtype.NotificationType{}, err
	}
	if t, ok := c.static[name]; ok {
		return t, nil
	}
	return DefaultType(name), nil
}

// Declared returns a declared type (stored or configured), ENOTFOUND for
// a type nobody declared.
func (c *Catalog) Declared(ctx context.Context, name string) (heraldtype.NotificationType, error) {
	t, err := c.store.GetType(ctx, name)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		if t, ok := c.static[name]; ok {
			return t, nil
		}
	}
	return t, err
}

// List returns every declared type, stored ones over configured ones,
// ordered by name.
func (c *Catalog) List(ctx context.Context) ([]heraldtype.NotificationType, error) {
	stored, err := c.store.ListTypes(ctx)
	if err != nil {
		return nil, err
	}
	all := maps.Clone(c.static)
	if all == nil {
		all = map[string]heraldtype.NotificationType{}
	}
	for _, t := range stored {
		all[t.Name] = t
	}
	out := slices.Collect(maps.Values(all))
	slices.SortFunc(out, func(a, b heraldtype.NotificationType) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// ValidatePreferences checks p: known types' names are not checked (a
// preference may precede its type's declaration), channels must be known,
// quiet hours well-formed, the cap within bounds.
func ValidatePreferences(p *heraldtype.Preferences) error {
	for name, tp := range p.Types {
		seen := map[heraldtype.Channel]bool{}
		for _, ch := range tp.Channels {
			if !validChannel(ch) || seen[ch] {
				return heraldtype.FieldErrorf("types", "type %q: channel %q is unknown or listed twice", name, ch)
			}
			seen[ch] = true
		}
	}
	seen := map[heraldtype.Channel]bool{}
	for _, ch := range p.OptedOutChannels {
		if !validChannel(ch) || seen[ch] {
			return heraldtype.FieldErrorf("opted_out_channels", "channel %q is unknown or listed twice", ch)
		}
		seen[ch] = true
	}
	if p.QuietHours != nil {
		if _, err := ParseQuietHours(*p.QuietHours); err != nil {
			return heraldtype.FieldErrorf("quiet_hours", "%v", err)
		}
	}
	if p.DailyCap < 0 || p.DailyCap > MaxDailyCap {
		return heraldtype.FieldErrorf("daily_cap", "must be between 0 (the default) and %d", MaxDailyCap)
	}
	return nil
}
