package store

import (
	"context"
	"encoding/base64"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Rules keeps the event rules (issue 20 item 2, S3.2, S3.4). Store
// embeds it. A rule is stored as its JSON definition beside the columns
// the engine selects it by (its source topic and event name).
type Rules interface {
	// PutRule creates the rule under r.Name or replaces the one there,
	// keeping its CreatedAt; UpdatedAt (and CreatedAt on create) = now.
	// It returns the stored rule and whether it was created.
	PutRule(ctx context.Context, r heraldtype.Rule, now time.Time) (heraldtype.Rule, bool, error)
	// GetRule returns the rule named name; ENOTFOUND if none.
	GetRule(ctx context.Context, name string) (heraldtype.Rule, error)
	// DeleteRule deletes it; ENOTFOUND if none.
	DeleteRule(ctx context.Context, name string) error
	// ListRules returns a page of rules ordered by name, and the next
	// page's cursor ("" at the end).
	ListRules(ctx context.Context, f RuleFilter) ([]heraldtype.Rule, string, error)
}

// RuleFilter selects rules; the type lives in heraldtype so the root
// package can alias it without importing the store (issue 30 item 8).
type RuleFilter = heraldtype.RuleFilter

// SourceHTTP is RuleFilter.Source for the rules without a Kafka topic.
const SourceHTTP = "http"

// Page sizes of the rule listing.
const (
	DefaultRulePage = 50
	MaxRulePage     = 200
)

// CheckRule refuses a rule without a name or an event.
func CheckRule(r heraldtype.Rule) error {
	if r.Name == "" || r.When.Event == "" {
		return heraldtype.Errorf(heraldtype.EINVALID, "rule: a name and an event are required")
	}
	return nil
}

// CheckRuleFilter checks f and returns its page size and the name after
// which the page starts.
func CheckRuleFilter(f RuleFilter) (limit int, after string, err error) {
	if after, err = decodeKeyCursor(f.Cursor); err != nil {
		return 0, "", err
	}
	if limit, err = pageSize(f.Limit, DefaultRulePage, MaxRulePage); err != nil {
		return 0, "", err
	}
	return limit, after, nil
}

// RulePage trims rules read by name with a LIMIT of limit+1.
func RulePage(rs []heraldtype.Rule, limit int) ([]heraldtype.Rule, string) {
	return page(rs, limit, func(r heraldtype.Rule) string { return base64.RawURLEncoding.EncodeToString([]byte(r.Name)) })
}

// RuleSourceColumn is the stored source of r: its Kafka topic, or
// SourceHTTP.
func RuleSourceColumn(r heraldtype.Rule) string {
	if r.Source.KafkaTopic != "" {
		return r.Source.KafkaTopic
	}
	return SourceHTTP
}
