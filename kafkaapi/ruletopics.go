package kafkaapi

import (
	"context"
	"time"
)

// followRuleTopics lists the rules' topics (Client.RuleTopics) every
// Config.RuleTopicPoll until ctx ends, and consumes each new one as an
// event topic read by Config.RuleTopic. A rule whose topic is not there
// yet needs no configuration and no restart: its events flow within a
// poll. A topic stays consumed until the consumer stops, even when its
// last rule goes: removing it mid-stream would gain nothing, and the
// group keeps its offsets either way.
func (c *Consumer) followRuleTopics(ctx context.Context) {
	tick := time.NewTicker(c.cfg.RuleTopicPoll)
	defer tick.Stop()
	for {
		c.addRuleTopics(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// addRuleTopics adds the rules' topics not consumed yet. A topic already
// configured keeps its own kind and encoding. A listing that fails is
// tried again at the next poll.
func (c *Consumer) addRuleTopics(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	topics, err := c.client.RuleTopics(cctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("kafka: cannot list the rules' topics; trying again at the next poll", "err", err)
		}
		return
	}
	var added []string
	c.mu.Lock()
	for _, t := range topics {
		if _, ok := c.readers[t]; ok || t == "" {
			continue
		}
		// The reader first: a record of the topic may be polled as soon
		// as it is added.
		c.readers[t] = c.ruleReader
		added = append(added, t)
	}
	c.mu.Unlock()
	if len(added) > 0 {
		c.kafka.AddConsumeTopics(added...)
		c.log.Info("kafka: consuming the rules' topics", "topics", added)
	}
}
