package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// log.debug (S2.7, issue 30 item 6): the environment's comma list and the
// file's list name components whose debug lines are written; an unknown
// name is refused naming the key and the known ones.
func TestLogDebugComponents(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", []string{"HERALD_LOG__DEBUG=reminder,kafka", "HERALD_LOG__LEVEL=warn"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Log.Debug, ",") != "reminder,kafka" {
		t.Fatalf("log.debug = %q", cfg.Log.Debug)
	}
	var buf bytes.Buffer
	log, err := newLogger(&buf, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	log.With("component", "kafka").Debug("kafka detail")
	log.With("component", "rules").Info("rules info")
	log.With("component", "rules").Warn("rules warning")
	out := buf.String()
	if !strings.Contains(out, "kafka detail") || strings.Contains(out, "rules info") || !strings.Contains(out, "rules warning") {
		t.Fatalf("written:\n%s", out)
	}
	if !log.Enabled(t.Context(), slog.LevelWarn) {
		t.Fatal("warn is off")
	}
	_, err = newLogger(&buf, LogConfig{Level: "info", Debug: []string{"remider"}})
	if err == nil || !strings.Contains(err.Error(), "log.debug") || !strings.Contains(err.Error(), "reminder, campaign") {
		t.Fatalf("unknown component: %v", err)
	}
}
