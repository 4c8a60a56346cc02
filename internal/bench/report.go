package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// count renders n with the noun in the number it takes: "1 trigger",
// "2 triggers" (the CLI's own count, internal/cli, for this tool's
// output).
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// WriteJSON writes r as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as an aligned two-column table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("server", "%s (%s, %s)", r.Server, r.Store, r.Mode)
	row("notifications accepted", "%d in %.2f s = %.0f/s", r.Notifications, r.TriggerSeconds, r.NotificationsPerSec)
	row("deliveries created", "%d", r.Deliveries)
	if r.TriggerRetries > 0 {
		row("trigger retries", "%d (503, 429 or a broken connection; sent again with the same Idempotency-Key)", r.TriggerRetries)
	}
	if r.TriggerErrors > 0 {
		row("trigger errors", "%d", r.TriggerErrors)
	}
	row("deliveries sent", "%d in %.2f s = %.0f/s", r.Sent, r.SendSeconds, r.DeliveriesPerSec)
	if r.Webhooks > 0 {
		row("webhooks received", "%d, the last %.2f s after the first send = %.0f/s", r.Webhooks, r.WebhookSeconds,
			float64(r.Webhooks)/r.WebhookSeconds)
	}
	warmup := ""
	if r.Latency.WarmupSeconds > 0 {
		warmup = fmt.Sprintf(", after a %gs warm-up", r.Latency.WarmupSeconds)
	}
	row("trigger → provider", "p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms  (%d pushes%s)",
		r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.Max, r.Latency.Count, warmup)
	if len(r.Rejected) > 0 {
		codes := make([]string, 0, len(r.Rejected))
		for c, n := range r.Rejected {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(codes)
		row("emulator errors", "%s", strings.Join(codes, ", "))
	}
	row("early retries", "%d", r.EarlyRetries)
	if r.FillResources != nil {
		row("server while filling", "%s", r.FillResources)
	}
	row("server", "%s", &r.Resources)
	if r.Resources.Machine != nil {
		row("machine", "%s", r.Resources.Machine)
	}
	return tw.Flush()
}

func (s *Resources) String() string {
	out := fmt.Sprintf("CPU %.1f s (%.2f cores), peak RSS %.0f MB", s.CPUSeconds, s.CPUCores, float64(s.PeakRSSBytes)/(1<<20))
	if s.PeakGoBytes > 0 {
		out += fmt.Sprintf(", peak Go memory %.0f MB", float64(s.PeakGoBytes)/(1<<20))
	}
	if s.Source == "process" {
		out += " [whole bench process: server + emulator + load generator]"
	}
	return out
}
