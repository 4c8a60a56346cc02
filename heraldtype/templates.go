package heraldtype

import "time"

// MessageTemplates are a notification type's message templates (issue
// 37): for each locale, a form per channel, rendered with the trigger's
// data in the user's locale and time zone. Every text is a Go template run
// by internal/message under the template budget; an e-mail's HTML is
// escaped for where each value lands.
type MessageTemplates struct {
	// DefaultLocale is the locale a user's falls back to when neither it
	// nor a parent of it (ko-KR → ko) has templates. It must be one of
	// Locales' keys.
	DefaultLocale string `json:"default_locale"`
	// Locales holds the channel forms by BCP 47 locale ("en", "ko",
	// "ko-KR", "ar").
	Locales map[string]ChannelTemplates `json:"locales"`
	// SampleData is the data a save renders every template with, so a
	// template naming a field the type's triggers do not carry is refused
	// then rather than at a send.
	SampleData map[string]string `json:"sample_data,omitempty"`
	// SMSMaxSegments caps an SMS's parts for this type (0: the server's
	// templates.sms_max_segments).
	SMSMaxSegments int `json:"sms_max_segments,omitempty"`
}

// ChannelTemplates are one locale's forms, one per channel; a channel
// without a form is sent the trigger's own title and body, as before.
type ChannelTemplates struct {
	Push  *PushTemplate  `json:"push,omitempty"`
	SMS   *SMSTemplate   `json:"sms,omitempty"`
	Email *EmailTemplate `json:"email,omitempty"`
	InApp *InAppTemplate `json:"in_app,omitempty"`
}

// PushTemplate is a push's title, body and data values.
type PushTemplate struct {
	Title string            `json:"title"`
	Body  string            `json:"body"`
	Data  map[string]string `json:"data,omitempty"`
}

// SMSTemplate is an SMS's text.
type SMSTemplate struct {
	Text string `json:"text"`
}

// EmailTemplate is an e-mail's subject, HTML body and plain-text body;
// without Text the plain part is made from the rendered HTML.
type EmailTemplate struct {
	Subject string `json:"subject"`
	HTML    string `json:"html,omitempty"`
	Text    string `json:"text,omitempty"`
}

// InAppTemplate is an inbox item's title, body and the URL it opens.
type InAppTemplate struct {
	Title     string `json:"title"`
	Body      string `json:"body"`
	ActionURL string `json:"action_url,omitempty"`
}

// TemplateVersion is one saved version of a type's templates (issue 37
// item 6): saving never overwrites, so a notification's recorded version
// still shows what it was rendered from.
type TemplateVersion struct {
	Type      string           `json:"type"`
	Version   int              `json:"version"`
	Templates MessageTemplates `json:"templates"`
	CreatedAt time.Time        `json:"created_at"`
}

// RenderedMessage is a type's templates rendered in one locale: a form
// per channel, with the sizes its limits read (issue 37 item 5: a
// preview shows them).
type RenderedMessage struct {
	Locale string         `json:"locale"`
	Push   *RenderedPush  `json:"push,omitempty"`
	SMS    *RenderedSMS   `json:"sms,omitempty"`
	Email  *RenderedEmail `json:"email,omitempty"`
	InApp  *RenderedInApp `json:"in_app,omitempty"`
}

// RenderedPush is a rendered push and its payload's size as APNs and FCM
// count it.
type RenderedPush struct {
	Title     string            `json:"title"`
	Body      string            `json:"body"`
	Data      map[string]string `json:"data,omitempty"`
	APNsBytes int               `json:"apns_bytes"`
	FCMBytes  int               `json:"fcm_bytes"`
}

// RenderedSMS is a rendered SMS: its encoding (GSM-7 or UCS-2), its length
// in that encoding's units and the segments a carrier splits it into.
type RenderedSMS struct {
	Text     string `json:"text"`
	Encoding string `json:"encoding"`
	Units    int    `json:"units"`
	Segments int    `json:"segments"`
}

// RenderedEmail is a rendered e-mail; Text is made from HTML when the
// template gives none.
type RenderedEmail struct {
	Subject string `json:"subject"`
	HTML    string `json:"html,omitempty"`
	Text    string `json:"text"`
	Bytes   int    `json:"bytes"`
}

// RenderedInApp is a rendered inbox item.
type RenderedInApp struct {
	Title     string `json:"title"`
	Body      string `json:"body"`
	ActionURL string `json:"action_url,omitempty"`
}

// TemplatePreview is POST /v1/types/{type}/preview's answer: every locale
// rendered with the data, and, for a named user, what that user would get.
type TemplatePreview struct {
	Type string `json:"type"`
	// Version is the saved version previewed; 0 for a draft.
	Version int               `json:"version"`
	Locales []LocalePreview   `json:"locales"`
	User    *UserPreview      `json:"user,omitempty"`
	Data    map[string]string `json:"data"`
}

// LocalePreview is one locale's render, or why it failed: Error for a
// template that did not render, OverLimit for a form a provider would
// refuse (the form is still shown).
type LocalePreview struct {
	Locale    string           `json:"locale"`
	Message   *RenderedMessage `json:"message,omitempty"`
	Error     string           `json:"error,omitempty"`
	OverLimit string           `json:"over_limit,omitempty"`
}

// UserPreview is the render a user would get: the locale theirs picks
// through the fallback chain, in their time zone, and the devices a push
// would go to.
type UserPreview struct {
	UserID   string          `json:"user_id"`
	Locale   string          `json:"user_locale"`
	TimeZone string          `json:"time_zone"`
	Devices  []PreviewDevice `json:"devices"`
	LocalePreview
}

// PreviewDevice is a device a push would go to.
type PreviewDevice struct {
	ID       string   `json:"device_id"`
	Platform Platform `json:"platform"`
}

// TestSendRequest is the body of POST /v1/types/{type}/test-send.
type TestSendRequest struct {
	// UserID is who gets the test: their locale, zone, devices and
	// addresses, through the configured providers (or serve --dev's
	// emulators).
	UserID string `json:"user_id"`
	// Data is what the templates render with; without it, the latest
	// version's sample data.
	Data map[string]string `json:"data,omitempty"`
	// Channels default to the type's.
	Channels []Channel `json:"channels,omitempty"`
}

// TestSendChannel is one channel of a test-send.
type TestSendChannel struct {
	Channel Channel `json:"channel"`
	// Status is TestSendQueued (deliveries due now) or TestSendSkipped.
	Status string `json:"status"`
	// Deliveries counts the channel's delivery rows, skipped ones
	// included (one per device for push).
	Deliveries int `json:"deliveries"`
	// Code and Reason say why a channel is skipped: the user's opt-out
	// (type_disabled, channel_disabled, channel_opted_out), no device
	// (CodeNoDevice), no address (no_address) or a suppressed one
	// (suppressed).
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Statuses of a TestSendChannel.
const (
	TestSendQueued  = "queued"
	TestSendSkipped = "skipped"
)

// CodeNoDevice is a test-send's skip code of push for a user without a
// device to push to.
const CodeNoDevice = "no_device"

// PreviewRequest is the body of POST /v1/types/{type}/preview.
type PreviewRequest struct {
	// Templates, when set, previews these — a draft, checked as a save
	// checks them but for its sample data, whose failures the preview
	// shows per locale — instead of a saved version.
	Templates *MessageTemplates `json:"templates,omitempty"`
	// Version previews a saved version; 0 the latest.
	Version int `json:"version,omitempty"`
	// Data is what the templates render with; without it, their sample
	// data.
	Data map[string]string `json:"data,omitempty"`
	// TimeZone is the IANA zone the locales' dates are shown in; default
	// UTC. A named user's render uses the user's own.
	TimeZone string `json:"time_zone,omitempty"`
	// UserID adds what that user would get: the locale theirs picks, in
	// their time zone, and the devices a push would go to.
	UserID string `json:"user_id,omitempty"`
}
