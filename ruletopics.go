package herald

import (
	"context"
	"slices"

	"github.com/heraldhq/herald/store"
)

// RuleTopics lists the Kafka topics the enabled rules take their events
// from (source.kafka_topic), each once, sorted. The Kafka intake
// (kafkaapi) reads each as an event topic without being configured to,
// so a rule's events flow as soon as the rule is saved.
func (c *Client) RuleTopics(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	topics := []string{}
	f := RuleFilter{Enabled: true, Limit: store.MaxRulePage}
	for {
		page, err := c.ListRules(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Rules {
			if t := r.Source.KafkaTopic; t != "" && !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	slices.Sort(topics)
	return topics, nil
}
