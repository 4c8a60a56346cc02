package herald

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// What an applied event leaves behind: its record, found again by its
// source, namespace and id and told from another event of the same id by
// its hash (issue 31 item 5), and the bounded summary of what the rules
// decided that the record and the answer keep (issue 31 item 4).

// DecisionCounts counts the rules' decisions on one event.
type DecisionCounts struct {
	// Rules is how many rules judged the event.
	Rules int `json:"rules"`
	// Detected, Errors: how many fired, and how many could not act on it
	// (a field missing or malformed, a template that failed).
	Detected int `json:"detected"`
	Errors   int `json:"errors"`
	// Runs is how many fan-outs the event started.
	Runs int `json:"runs"`
}

// summary is out as the event's answer and record keep it: the counts of
// all decisions and the first limit of them.
func summary(out TrackResult, limit int) TrackResult {
	if len(out.Rules) == 0 {
		return out
	}
	n := DecisionCounts{Rules: len(out.Rules)}
	for _, o := range out.Rules {
		if o.Detected {
			n.Detected++
		}
		if o.Error != "" {
			n.Errors++
		}
		if o.Run != "" && o.Error == "" {
			n.Runs++
		}
	}
	out.Counts = &n
	if len(out.Rules) > limit {
		out.Rules, out.RulesTruncated = out.Rules[:limit:limit], true
	}
	return out
}

// eventHash fingerprints an event for its id (issue 31 item 5): the same
// id with another hash is another event. Its id, topic and namespace are
// left out — they are what it is looked up by — and encoding/json sorts
// the data's keys, so the encoding is canonical.
func eventHash(e Event) (string, error) {
	e.ID, e.Topic, e.Namespace = "", "", ""
	if e.OccurredAt != nil {
		at := e.OccurredAt.UTC()
		e.OccurredAt = &at
	}
	b, err := json.Marshal(e)
	if err != nil {
		return "", heraldtype.Errorf(heraldtype.EINVALID, "the event cannot be encoded: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// replayedEvent answers an event whose id was recorded: from the record
// when it is the same event, a conflict when the id came with another
// body (issue 31 item 5). A record from before events were hashed is
// taken for the same event.
func (c *Client) replayedEvent(k store.EventKey, rec store.RecordedEvent, hash string) (TrackResult, error) {
	if rec.RequestHash != "" && rec.RequestHash != hash {
		c.metrics.Events.WithLabelValues("conflict").Inc()
		return TrackResult{}, heraldtype.Errorf(heraldtype.ECONFLICT,
			"event %q was applied before with other content; an event id names one event: give this one its own id", k.ID)
	}
	var out TrackResult
	if err := json.Unmarshal(rec.Outcome, &out); err != nil {
		return TrackResult{}, fmt.Errorf("herald: a recorded event's outcome does not decode: %w", err)
	}
	out.Replayed = true
	c.metrics.Events.WithLabelValues("replayed").Inc()
	return out, nil
}
