package herald

import (
	"log/slog"

	"github.com/heraldhq/herald/internal/logging"
)

// The components Herald logs as (S2.7): each one's log lines carry
// "component" with its name, the name a per-component debug switch (the
// CLI's log.debug) selects and Config.OnError is called with.
const (
	ComponentDelivery = "delivery" // the delivery workers
	ComponentReminder = "reminder" // the reminder scheduler
	ComponentCampaign = "campaign" // the campaign runner
	ComponentRules    = "rules"    // the rule runner (event fan-out)
	ComponentLeader   = "leader"   // the leader election and its maintenance services
	ComponentKafka    = "kafka"    // the Kafka consumer (package kafkaapi)
	ComponentHTTP     = "http"     // the HTTP API (package httpapi)
	ComponentWebhooks = "webhooks" // the outbound webhook dispatcher
	ComponentDigests  = "digests"  // the digest worker
	// ComponentEscalations is the escalation worker.
	ComponentEscalations = "escalations"
)

// LogComponents lists every component name, in the order of the constants.
func LogComponents() []string {
	return []string{ComponentDelivery, ComponentReminder, ComponentCampaign, ComponentRules,
		ComponentLeader, ComponentKafka, ComponentHTTP, ComponentWebhooks, ComponentDigests,
		ComponentEscalations}
}

// Logger returns the logger of a component: Config.Logger with the
// component's name, reporting the errors it logs to Config.OnError. The
// transports (the HTTP API, the Kafka consumer) take theirs from here.
func (c *Client) Logger(component string) *slog.Logger {
	return c.log.With(logging.Key, component)
}
