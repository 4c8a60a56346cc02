package cli

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 31 items 2 and 6: callout.allow is parsed and checked, --dev
// adds loopback (and only loopback), and a secret's value is read from
// its file.
func TestCalloutConfig(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "crm")
	if err := os.WriteFile(file, []byte("Bearer s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Callout: CalloutConfig{Allow: []string{"10.0.0.0/8"},
		Secrets: map[string]CalloutSecretConfig{"crm": {Header: "Authorization", File: file}}}}
	out, err := cfg.callout(false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Allow, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}) || out.Secrets["crm"].Value != "Bearer s3cret" ||
		out.Secrets["crm"].Header != "Authorization" {
		t.Fatalf("%+v", out)
	}
	dev, err := (&Config{}).callout(true)
	if err != nil || !slices.Contains(dev.Allow, netip.MustParsePrefix("127.0.0.0/8")) || len(dev.Allow) != 2 {
		t.Fatalf("dev: %+v %v", dev, err)
	}
	for _, tc := range []struct {
		cfg  CalloutConfig
		want string
	}{
		{CalloutConfig{Allow: []string{"10.1.2.3/8"}}, "callout.allow[0]"},
		{CalloutConfig{Allow: []string{"10.0.0.0/8", "intranet"}}, "callout.allow[1]"},
		{CalloutConfig{Secrets: map[string]CalloutSecretConfig{"crm": {Header: "Authorization"}}}, "callout.secrets.crm"},
		{CalloutConfig{Secrets: map[string]CalloutSecretConfig{"crm": {Header: "Authorization", File: file + ".missing"}}}, "callout.secrets.crm.value_file"},
	} {
		if _, err := (&Config{Callout: tc.cfg}).callout(false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	// The keys load from a file and the environment.
	path := filepath.Join(t.TempDir(), "herald.yaml")
	yaml := "callout:\n  allow: [10.0.0.0/8, fd00::/8]\n  secrets:\n    crm: {header: X-Api-Key, file: " + file + "}\ncampaigns:\n  fetch_max_items: 7\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := loadConfig(path, []string{"HERALD_CAMPAIGNS__FETCH_MAX_VALUES=5000"})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Callout.Allow) != 2 || loaded.Callout.Secrets["crm"].Header != "X-Api-Key" || loaded.Campaigns.FetchMaxItems != 7 ||
		loaded.Campaigns.FetchMaxValues != 5000 || loaded.Campaigns.FetchMaxFields != 100 {
		t.Fatalf("loaded: %+v %+v", loaded.Callout, loaded.Campaigns)
	}
}
