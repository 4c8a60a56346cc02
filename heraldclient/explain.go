package heraldclient

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// ExplainParams names what to explain: one of the user's notifications,
// a trigger (IdempotencyKey), a rule's run (Rule and RuleRun, as ListRuleRuns lists it), an
// event (Event), or the user's newest notification of a type created at
// or after Since. NotificationID wins over Rule and RuleRun, which win
// over Event, which wins over IdempotencyKey, which wins over Type.
type ExplainParams struct {
	Type           string
	NotificationID string
	IdempotencyKey string
	Rule, RuleRun  string
	// Event is an applied event's id; EventSource the Kafka topic it was
	// read from ("" for one posted to POST /v1/events); EventNamespace
	// the id of the API key that posted it — "" for the calling key's own
	// (only an admin key may name another's).
	Event, EventSource, EventNamespace string
	Since                              time.Time
}

// Explain asks why a user did or did not get a notification (GET
// /v1/users/{id}/explain): a verdict (a stable code such as quiet_hours,
// opted_out, duplicate, daily_cap, device_invalid, provider_failure,
// not_detected or sent), a sentence, and the findings drawn from the
// records.
func (c *Client) Explain(ctx context.Context, userID string, p ExplainParams) (heraldtype.Explanation, error) {
	if userID == "" {
		return heraldtype.Explanation{}, &Error{Code: CodeInvalidArgument, Field: "id", Message: "id: is required"}
	}
	q := newQuery().str("type", p.Type).str("notification_id", p.NotificationID).
		str("idempotency_key", p.IdempotencyKey).
		str("rule", p.Rule).str("rule_run", p.RuleRun).
		str("event", p.Event).str("event_source", p.EventSource).str("event_namespace", p.EventNamespace).time("since", p.Since)
	var x heraldtype.Explanation
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s/explain", userID), query: url.Values(q), out: &x})
	return x, err
}
