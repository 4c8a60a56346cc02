package herald

import (
	"cmp"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
)

// TemplateConfig bounds every render of a message template — a rule's
// notification for an event (and its dry run), a campaign's for one
// recipient — so that no template an operator saves can spin a core or
// take the process's memory (issue 31 item 1). A render over a limit
// fails that rule decision or that recipient as render_failed, with the
// reason; the rest goes on. Zero values take the defaults; negative values
// are refused.
type TemplateConfig struct {
	// MaxSteps bounds the steps of one message's render: each iteration of
	// a range (nested ones each count) and each string a function (print,
	// printf, println, html, js, urlquery) builds. Default 10,000. A
	// template that ranges over a number above it is refused when saved.
	MaxSteps int
	// MaxBytes bounds the bytes one message's render builds: what it
	// writes and every string a function builds on the way, written or
	// not. Default 256 KiB.
	MaxBytes int
	// MaxDuration bounds one message's render in time, checked at each
	// step: the backstop for work a step does that the counts do not
	// measure (comparing long strings). Default 250 ms.
	MaxDuration time.Duration
	// APNsMaxBytes and FCMMaxBytes bound a push rendered from a type's
	// templates, its payload as each provider counts it (issue 37 item 4).
	// Default 4096: what both providers accept.
	APNsMaxBytes int
	FCMMaxBytes  int
	// SMSMaxSegments bounds an SMS rendered from a type's templates; a
	// type may set a lower maximum. Default 10.
	SMSMaxSegments int
}

// Defaults of TemplateConfig.
const (
	DefaultTemplateMaxSteps    = tmpl.DefaultMaxSteps
	DefaultTemplateMaxBytes    = tmpl.DefaultMaxBytes
	DefaultTemplateMaxDuration = tmpl.DefaultMaxDuration
	DefaultAPNsMaxBytes        = message.DefaultAPNsMaxBytes
	DefaultFCMMaxBytes         = message.DefaultFCMMaxBytes
	DefaultSMSMaxSegments      = message.DefaultSMSMaxSegments
)

// withDefaults fills the zero limits and refuses negative ones.
func (t TemplateConfig) withDefaults() (TemplateConfig, error) {
	switch {
	case t.MaxSteps < 0:
		return t, fmt.Errorf("herald: Templates.MaxSteps %d must be positive", t.MaxSteps)
	case t.MaxBytes < 0:
		return t, fmt.Errorf("herald: Templates.MaxBytes %d must be positive", t.MaxBytes)
	case t.MaxDuration < 0:
		return t, fmt.Errorf("herald: Templates.MaxDuration %v must be positive", t.MaxDuration)
	case t.APNsMaxBytes < 0 || t.FCMMaxBytes < 0 || t.SMSMaxSegments < 0:
		return t, fmt.Errorf("herald: Templates.APNsMaxBytes, FCMMaxBytes and SMSMaxSegments must be positive")
	case t.MaxSteps == 0:
		t.MaxSteps = DefaultTemplateMaxSteps
	}
	if t.MaxBytes == 0 {
		t.MaxBytes = DefaultTemplateMaxBytes
	}
	if t.MaxDuration == 0 {
		t.MaxDuration = DefaultTemplateMaxDuration
	}
	t.APNsMaxBytes = cmp.Or(t.APNsMaxBytes, DefaultAPNsMaxBytes)
	t.FCMMaxBytes = cmp.Or(t.FCMMaxBytes, DefaultFCMMaxBytes)
	t.SMSMaxSegments = cmp.Or(t.SMSMaxSegments, DefaultSMSMaxSegments)
	return t, nil
}

// templateLimits are the limits every template is parsed and rendered
// with.
func (c *Client) templateLimits() tmpl.Limits {
	t := c.cfg.Templates
	return tmpl.Limits{MaxSteps: t.MaxSteps, MaxBytes: t.MaxBytes, MaxDuration: t.MaxDuration}
}

// messageConfig is what a type's templates are compiled and rendered
// with.
func (c *Client) messageConfig() message.Config {
	t := c.cfg.Templates
	return message.Config{Templates: c.templateLimits(), APNsMaxBytes: t.APNsMaxBytes, FCMMaxBytes: t.FCMMaxBytes,
		SMSMaxSegments: t.SMSMaxSegments}
}
