package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A type's digest and the digest worker's keys from the configuration
// file, as docs/configuration.md writes them (issue 36 item 1).
func TestDigestConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "herald.yaml")
	yaml := `
max_digest_items: 200
digests: {poll_interval: 2s, batch_size: 10, lease: 1m}
types:
  comment:
    digest: {window: 10m, key: "{{.post_id}}", max_items: 50, first: collect,
             title: "{{.Count}} new comments", body: "{{range .Items}}{{.Data.author}} {{end}}"}
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
	d := hc.Types["comment"].Digest
	if d == nil || d.Window != "10m" || d.Key != "{{.post_id}}" || d.MaxItems != 50 || d.First != "collect" || d.Title != "{{.Count}} new comments" {
		t.Fatalf("comment's digest = %+v", d)
	}
	if hc.Limits.MaxDigestItems != 200 || hc.Digests.PollInterval != 2*time.Second || hc.Digests.BatchSize != 10 ||
		hc.Digests.Lease != time.Minute || hc.Digests.Disabled {
		t.Fatalf("limits %+v, digests %+v", hc.Limits, hc.Digests)
	}
	cfg.Digests.Lease = 0
	if _, err := cfg.clientConfig(); err == nil {
		t.Fatal("digests.lease 0 accepted")
	}
	cfg.Digests.Lease, cfg.MaxDigestItems = time.Minute, 0
	if _, err := cfg.clientConfig(); err == nil {
		t.Fatal("max_digest_items 0 accepted")
	}
}
