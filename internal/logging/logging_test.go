package logging

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestDebug is S2.7's debug namespace (issue 30 item 6): debug records
// pass for the named components only; every component keeps the base
// level.
func TestDebug(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	log := slog.New(Debug(inner, slog.LevelInfo, []string{"reminder", "kafka"}))
	log.With(Key, "reminder").Debug("reminder detail")
	log.With(Key, "rules").Debug("rules detail")
	log.With(Key, "rules").Info("rules info")
	log.Debug("untagged detail")
	log.With(Key, "kafka").WithGroup("g").With("x", 1).Debug("kafka detail")
	out := buf.String()
	for _, want := range []string{"reminder detail", "rules info", "kafka detail"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"rules detail", "untagged detail"} {
		if strings.Contains(out, not) {
			t.Errorf("%q passed in\n%s", not, out)
		}
	}
	// Nothing named: the base level alone.
	buf.Reset()
	slog.New(Debug(inner, slog.LevelWarn, nil)).With(Key, "reminder").Info("quiet")
	if buf.Len() != 0 {
		t.Fatalf("info passed a warn base: %s", buf.String())
	}
}

// TestReport: the hook gets every warn-or-above record's error, with its
// component and message, even when the log level hides the record; records
// without an error and below warn are not reported.
func TestReport(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	type report struct {
		component string
		err       error
	}
	var mu sync.Mutex
	var got []report
	h := Report(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}), func(_ context.Context, c string, err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, report{c, err})
	})
	log := slog.New(h)
	log.With(Key, "reminder").Warn("reminder: batch failed", "err", fs.ErrClosed)
	log.With(Key, "rules").Error("rules: run stopped", "rule", "r1", "err", errors.New("boom"))
	log.With(Key, "rules").Warn("no error here", "rule", "r1")
	log.With(Key, "rules").Info("info with error", "err", errors.New("ignored"))
	log.Error("untagged", "err", errors.New("x"))
	if len(got) != 3 {
		t.Fatalf("reports %v, want 3", got)
	}
	if got[0].component != "reminder" || !errors.Is(got[0].err, fs.ErrClosed) || got[0].err.Error() != "reminder: batch failed: file already closed" {
		t.Errorf("first report %+v", got[0])
	}
	if got[1].component != "rules" || got[2].component != "" {
		t.Errorf("components %q, %q", got[1].component, got[2].component)
	}
	// The level still decides what is written.
	if out := buf.String(); strings.Contains(out, "batch failed") || !strings.Contains(out, "run stopped") {
		t.Errorf("written:\n%s", out)
	}
	if Report(h, nil) != h {
		t.Error("a nil hook wraps")
	}
}
