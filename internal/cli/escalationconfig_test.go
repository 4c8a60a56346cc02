package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// A type's escalation and the escalation worker's keys from the
// configuration file, as docs/configuration.md writes them (issue 36
// item 3); the bounds refused by name.
func TestEscalationConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "herald.yaml")
	yaml := `
max_escalation_steps: 3
escalations: {poll_interval: 2s, batch_size: 10, lease: 1m}
types:
  order_ready:
    channels: [in_app]
    escalate: [{after: 10m, unless: read, channels: [push]}, {after: 30m, unless: read, channels: [sms]}]
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := cfg.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	es := hc.Types["order_ready"].Escalate
	if len(es) != 2 || es[0].After != "10m" || es[0].Unless != heraldtype.ReceiptRead || len(es[1].Channels) != 1 ||
		es[1].Channels[0] != heraldtype.ChannelSMS {
		t.Fatalf("order_ready's escalation = %+v", es)
	}
	if hc.Limits.MaxEscalationSteps != 3 || hc.Escalations.PollInterval != 2*time.Second || hc.Escalations.BatchSize != 10 ||
		hc.Escalations.Lease != time.Minute || hc.Escalations.Disabled {
		t.Fatalf("limits %+v, escalations %+v", hc.Limits, hc.Escalations)
	}
	cfg.Escalations.BatchSize = 0
	if _, err := cfg.clientConfig(); err == nil {
		t.Fatal("escalations.batch_size 0 accepted")
	}
	cfg.Escalations.BatchSize, cfg.MaxEscalationSteps = 10, 0
	if _, err := cfg.clientConfig(); err == nil {
		t.Fatal("max_escalation_steps 0 accepted")
	}
}
