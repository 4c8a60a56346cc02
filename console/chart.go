package console

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// chart is the overview's sent/failed per minute as SVG geometry: one pair
// of stacked bars per minute, in a fixed viewBox the stylesheet scales.
// It is drawn on the server, so the page needs no chart library and the
// table beside it (the same numbers) serves a screen reader.
type chart struct {
	Width, Height int
	Max           int64
	Bars          []chartBar
	Minutes       []heraldtype.MinuteCount
	Sent, Failed  int64
	From, To      time.Time
}

// chartBar is one minute: sent at the bottom, failed stacked on top.
type chartBar struct {
	X, W             float64
	SentY, SentH     float64
	FailedY, FailedH float64
}

const (
	chartWidth  = 600
	chartHeight = 160
	// chartTop leaves room above the tallest bar.
	chartTop = 10
)

func newChart(ms []heraldtype.MinuteCount) chart {
	c := chart{Width: chartWidth, Height: chartHeight, Minutes: ms}
	for _, m := range ms {
		c.Sent += m.Sent
		c.Failed += m.Failed
		c.Max = max(c.Max, m.Sent+m.Failed)
	}
	if len(ms) == 0 {
		return c
	}
	c.From, c.To = ms[0].Minute, ms[len(ms)-1].Minute
	slot := float64(chartWidth) / float64(len(ms))
	scale := 0.0
	if c.Max > 0 {
		scale = float64(chartHeight-chartTop) / float64(c.Max)
	}
	for i, m := range ms {
		b := chartBar{X: float64(i)*slot + slot*0.1, W: slot * 0.8}
		b.SentH = float64(m.Sent) * scale
		b.SentY = chartHeight - b.SentH
		b.FailedH = float64(m.Failed) * scale
		b.FailedY = b.SentY - b.FailedH
		c.Bars = append(c.Bars, b)
	}
	return c
}
