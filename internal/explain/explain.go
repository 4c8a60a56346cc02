// Package explain answers "why didn't this user get it?" from the records
// (issue 34 item 2). It is pure, like internal/schedule: the root Client
// gathers the records through its store (a notification with its
// deliveries and their attempts, the user's devices and preferences, the
// notifications that decided a duplicate or the daily cap) and Explain
// turns them into one verdict, a sentence and the findings behind it. It
// never guesses: every finding names the record it comes from, and what
// the records do not show (a dedupe lock held by a notification already
// pruned) is said to be unknown rather than invented.
package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Records are what an explanation is drawn from.
type Records struct {
	UserID string
	Type   string
	Since  time.Time
	// Location is the user's time zone, for the times a message shows.
	Location *time.Location
	// Notification is the notification explained; nil when none was
	// found (then Preferences and TypeConfig describe the present).
	Notification  *heraldtype.Notification
	Status        heraldtype.HistoryStatus
	Deliveries    []heraldtype.Delivery
	Devices       []heraldtype.Device
	Preferences   heraldtype.Preferences
	TypeConfig    heraldtype.NotificationType
	Duplicate     *Duplicate
	Cap           *Cap
	HasProviderOf func(heraldtype.Channel) bool
}

// Duplicate is what the records show about a duplicate: the notification
// with the same dedupe key sent before it within the window, when found.
type Duplicate struct {
	Of     string
	SentAt time.Time
	Window time.Duration
}

// Cap is the daily cap a notification ran into: the user's local day, its
// limit and the notifications that counted toward it that day.
type Cap struct {
	Day     string
	Limit   int
	Counted []string
}

// rank orders the codes: the first reason decides the verdict, as the
// status rule (store/rules.StatusRules) lets a send win over a deferral,
// a deferral over a wait, a rate limit over an opt-out, an opt-out over a
// failure.
var rank = map[string]int{
	heraldtype.ExplainSent:            0,
	heraldtype.ExplainQuietHours:      1,
	heraldtype.ExplainPending:         2,
	heraldtype.ExplainDuplicate:       3,
	heraldtype.ExplainDailyCap:        4,
	heraldtype.ExplainOptedOut:        5,
	heraldtype.ExplainNoDevice:        6,
	heraldtype.ExplainDeviceInvalid:   7,
	heraldtype.ExplainDeviceOptedOut:  8,
	heraldtype.ExplainNoAddress:       9,
	heraldtype.ExplainSuppressed:      10,
	heraldtype.ExplainProviderFailure: 11,
	heraldtype.ExplainUnknown:         12,
	heraldtype.ExplainNoProvider:      13,
	heraldtype.ExplainNotDelivered:    14,
}

// Explain draws the explanation from r.
func Explain(r Records) heraldtype.Explanation {
	if r.Location == nil {
		r.Location = time.UTC
	}
	out := heraldtype.Explanation{UserID: r.UserID, Type: r.Type, Reasons: []heraldtype.ExplainReason{}}
	if r.Notification == nil {
		return r.none(out)
	}
	n := r.Notification
	out.Type, out.NotificationID, out.CreatedAt, out.Status = n.Type, n.ID, n.CreatedAt, r.Status
	// What a delivery's state says is ranked; what the records add about
	// it (the device its failure invalidated) follows the ranked ones.
	var extra []heraldtype.ExplainReason
	for i := range r.Deliveries {
		rs := r.delivery(&r.Deliveries[i])
		out.Reasons = append(out.Reasons, rs[0])
		extra = append(extra, rs[1:]...)
	}
	for _, ch := range n.Channels {
		if !slices.ContainsFunc(r.Deliveries, func(d heraldtype.Delivery) bool { return d.Channel == ch }) {
			out.Reasons = append(out.Reasons, r.missing(ch, n.CreatedAt))
		}
	}
	slices.SortStableFunc(out.Reasons, func(a, b heraldtype.ExplainReason) int { return rankOf(a.Code) - rankOf(b.Code) })
	out.Reasons = append(out.Reasons, extra...)
	if len(out.Reasons) == 0 {
		out.Verdict = heraldtype.ExplainNotDelivered
		out.Message = fmt.Sprintf("Notification %s has no deliveries.", n.ID)
		return out
	}
	first := out.Reasons[0]
	out.Verdict = first.Code
	out.Message = first.Message
	if first.Code == heraldtype.ExplainSent && r.Status == heraldtype.HistoryPartiallySent {
		out.Message = strings.TrimSuffix(first.Message, ".") + "; another channel failed."
	}
	return out
}

func rankOf(code string) int {
	if v, ok := rank[code]; ok {
		return v
	}
	return len(rank)
}

// none explains the absence of a notification of the type: that none was
// created, and what the records say would stop one today.
func (r Records) none(out heraldtype.Explanation) heraldtype.Explanation {
	out.Verdict = heraldtype.ExplainNoNotification
	if r.Since.IsZero() {
		out.Message = fmt.Sprintf("No %s notification was created for user %s.", r.Type, r.UserID)
	} else {
		out.Message = fmt.Sprintf("No %s notification was created for user %s since %s.", r.Type, r.UserID, r.when(r.Since))
	}
	channels := r.TypeConfig.Channels
	if len(channels) == 0 {
		channels = []heraldtype.Channel{heraldtype.ChannelPush}
	}
	for _, ch := range channels {
		if !r.TypeConfig.Critical {
			if code := r.Preferences.Refusal(r.Type, ch); code != "" {
				out.Reasons = append(out.Reasons, heraldtype.ExplainReason{Code: heraldtype.ExplainOptedOut, Channel: ch, ErrorCode: code,
					Message: "One sent now would not go on " + string(ch) + ": " + heraldtype.RefusalReason(code, r.Type, ch) + "."})
				continue
			}
		}
		if ch == heraldtype.ChannelPush {
			if rs := r.devices(); rs.Code != heraldtype.ExplainSent {
				rs.Message = "One sent now would not go on push: " + lowerFirst(rs.Message)
				out.Reasons = append(out.Reasons, rs)
			}
		}
	}
	return out
}

// delivery explains one delivery from its state, its codes and its
// attempts.
func (r Records) delivery(d *heraldtype.Delivery) []heraldtype.ExplainReason {
	rs := heraldtype.ExplainReason{Channel: d.Channel, DeliveryID: d.ID, DeviceID: d.DeviceID, State: d.State,
		ErrorCode: d.LastErrorCode, Error: d.LastError, At: d.FinishedAt}
	on := r.target(d)
	switch d.State {
	case heraldtype.StateSent:
		rs.Code, rs.Error = heraldtype.ExplainSent, ""
		if d.Channel == heraldtype.ChannelInApp {
			rs.Message = fmt.Sprintf("It is in the user's inbox since %s.", r.when(finished(d)))
		} else {
			rs.Message = fmt.Sprintf("It was sent %s at %s.", on, r.when(finished(d)))
		}
	case heraldtype.StatePending, heraldtype.StateLeased:
		until := d.RunAt
		rs.Until = &until
		if d.LastErrorCode == heraldtype.CodeQuietHours {
			rs.Code = heraldtype.ExplainQuietHours
			rs.At = lastAttempt(d, heraldtype.OutcomeDeferred)
			why := "the user's quiet hours"
			if d.LastError != "" {
				why = "the user's " + d.LastError
			}
			rs.Message = fmt.Sprintf("It was deferred %s by %s until %s.", on, why, r.when(until))
			break
		}
		rs.Code = heraldtype.ExplainPending
		switch {
		case d.State == heraldtype.StateLeased:
			rs.Message = fmt.Sprintf("It is being sent %s now (attempt %d).", on, d.Attempt)
		case d.LastErrorCode != "":
			rs.Message = fmt.Sprintf("It is waiting %s to be tried again at %s; the last attempt failed with %s.", on, r.when(until), d.LastErrorCode)
		default:
			rs.Message = fmt.Sprintf("It is waiting %s to be sent at %s.", on, r.when(until))
		}
	case heraldtype.StateOptedOut:
		rs.Code = heraldtype.ExplainOptedOut
		why := heraldtype.RefusalReason(d.LastErrorCode, d.Type, d.Channel)
		if why == "" {
			why = "the user's preferences refused it"
		}
		rs.Message = fmt.Sprintf("It was not sent %s: %s (%s).", on, why, d.LastErrorCode)
	case heraldtype.StateRateLimited:
		return []heraldtype.ExplainReason{r.rateLimited(rs, d, on)}
	case heraldtype.StateSkipped:
		return r.skipped(rs, d, on)
	case heraldtype.StateDead:
		rs.Code = heraldtype.ExplainProviderFailure
		if a := lastFailure(d); a != nil {
			rs.ErrorCode, rs.Error = a.ErrorCode, a.Error
		}
		rs.Message = fmt.Sprintf("It failed %s after %s: the provider answered %s.", on, attempts(d.Attempt), answer(rs.ErrorCode, rs.Error))
		out := []heraldtype.ExplainReason{rs}
		if dev := r.device(d.DeviceID); dev != nil && dev.Status == heraldtype.DeviceInvalid {
			out = append(out, r.invalid(*dev, d))
		}
		return out
	case heraldtype.StateUnknown:
		rs.Code = heraldtype.ExplainUnknown
		rs.Message = fmt.Sprintf("Its send %s never got an answer (%s): the provider may have it, and it is not sent again unless replayed.", on, d.LastErrorCode)
	default:
		rs.Code = heraldtype.ExplainNotDelivered
		rs.Message = fmt.Sprintf("It is %s %s.", d.State, on)
	}
	return []heraldtype.ExplainReason{rs}
}

func (r Records) rateLimited(rs heraldtype.ExplainReason, d *heraldtype.Delivery, on string) heraldtype.ExplainReason {
	switch d.LastErrorCode {
	case "duplicate":
		rs.Code = heraldtype.ExplainDuplicate
		key := ""
		if r.Notification.DedupeKey != "" {
			key = fmt.Sprintf(" %q", r.Notification.DedupeKey)
		}
		if dup := r.Duplicate; dup != nil && dup.Of != "" {
			rs.NotificationIDs = []string{dup.Of}
			rs.Message = fmt.Sprintf("It was not sent %s: notification %s with the same dedupe key%s was sent at %s, within the type's %s window.",
				on, dup.Of, key, r.when(dup.SentAt), dup.Window)
		} else {
			rs.Message = fmt.Sprintf("It was not sent %s: another %s notification with the same dedupe key%s was sent within the type's window (it is no longer in the records).",
				on, d.Type, key)
		}
	case "daily_cap":
		rs.Code = heraldtype.ExplainDailyCap
		if c := r.Cap; c != nil {
			rs.NotificationIDs = c.Counted
			rs.Message = fmt.Sprintf("It was not sent %s: the user's daily cap of %d was reached on %s (their local day); %d notifications counted toward it.",
				on, c.Limit, c.Day, len(c.Counted))
		} else {
			rs.Message = fmt.Sprintf("It was not sent %s: the user's daily cap was reached.", on)
		}
	default:
		rs.Code = heraldtype.ExplainNotDelivered
		rs.Message = fmt.Sprintf("It was rate limited %s (%s).", on, d.LastErrorCode)
	}
	return rs
}

// Codes the dispatcher skips a delivery with at send time
// (internal/dispatch), and the enqueue's for an address (store).
const (
	codeDeviceRemoved = "device_removed"
	codeTokenInvalid  = "token_invalid"
	codeDeviceOptOut  = "opted_out"
	codeNoProvider    = "no_provider"
	codeNoAddress     = "no_address"
	codeSuppressed    = "suppressed"
)

func (r Records) skipped(rs heraldtype.ExplainReason, d *heraldtype.Delivery, on string) []heraldtype.ExplainReason {
	switch d.LastErrorCode {
	case codeNoAddress:
		rs.Code = heraldtype.ExplainNoAddress
		rs.Message = fmt.Sprintf("It was not sent %s: the user has no %s.", d.Channel, addressName(d.Channel))
	case codeSuppressed:
		rs.Code = heraldtype.ExplainSuppressed
		rs.Message = fmt.Sprintf("It was not sent %s: that address is suppressed (it bounced or asked not to be contacted).", on)
	case codeDeviceRemoved:
		rs.Code = heraldtype.ExplainDeviceInvalid
		rs.Message = fmt.Sprintf("It was not sent %s: the device was removed before the send.", on)
	case codeTokenInvalid:
		if dev := r.device(d.DeviceID); dev != nil {
			return []heraldtype.ExplainReason{r.invalid(*dev, d)}
		}
		rs.Code = heraldtype.ExplainDeviceInvalid
		rs.Message = fmt.Sprintf("It was not sent %s: the device's token had been invalidated.", on)
	case codeDeviceOptOut:
		rs.Code = heraldtype.ExplainDeviceOptedOut
		rs.Message = fmt.Sprintf("It was not sent %s: the device has push notifications turned off.", on)
	case codeNoProvider:
		rs.Code = heraldtype.ExplainNoProvider
		rs.Message = fmt.Sprintf("It was not sent %s: no provider is configured for it.", on)
	default:
		rs.Code = heraldtype.ExplainNotDelivered
		rs.Message = fmt.Sprintf("It was skipped %s (%s).", on, d.LastErrorCode)
	}
	return []heraldtype.ExplainReason{rs}
}

// invalid explains an invalidated device: since when and why, from the
// device's own record.
func (r Records) invalid(dev heraldtype.Device, d *heraldtype.Delivery) heraldtype.ExplainReason {
	rs := heraldtype.ExplainReason{Code: heraldtype.ExplainDeviceInvalid, DeviceID: dev.ID, Channel: heraldtype.ChannelPush,
		ErrorCode: dev.InvalidReason, At: dev.InvalidatedAt}
	if d != nil {
		rs.DeliveryID, rs.State = d.ID, d.State
	}
	since := ""
	if dev.InvalidatedAt != nil {
		since = " since " + r.when(*dev.InvalidatedAt)
	}
	why := ""
	if dev.InvalidReason != "" {
		why = " (" + dev.InvalidReason + ")"
	}
	rs.Message = fmt.Sprintf("Device %s has been invalid%s%s: the provider said its token is dead.", dev.ID, since, why)
	return rs
}

// missing explains a channel the notification asked for that got no
// delivery at all: for push, the user's devices say why.
func (r Records) missing(ch heraldtype.Channel, created time.Time) heraldtype.ExplainReason {
	if ch == heraldtype.ChannelPush {
		rs := r.devices()
		if rs.Code == heraldtype.ExplainSent {
			// A usable device now, but none when the notification was
			// written: it was registered (or came back) afterwards.
			rs = heraldtype.ExplainReason{Code: heraldtype.ExplainNoDevice, Channel: ch,
				Message: fmt.Sprintf("It was not sent on push: the user had no usable device at %s (one was registered or renewed since).", r.when(created))}
		} else {
			rs.Message = "It was not sent on push: " + lowerFirst(rs.Message)
		}
		return rs
	}
	if r.HasProviderOf != nil && !r.HasProviderOf(ch) {
		return heraldtype.ExplainReason{Code: heraldtype.ExplainNoProvider, Channel: ch,
			Message: fmt.Sprintf("It was not sent on %s: no provider is configured for it.", ch)}
	}
	return heraldtype.ExplainReason{Code: heraldtype.ExplainNotDelivered, Channel: ch,
		Message: fmt.Sprintf("It got no %s delivery.", ch)}
}

// devices says whether the user has a device a push can go to now:
// ExplainSent when one is active and opted in, else why not.
func (r Records) devices() heraldtype.ExplainReason {
	if len(r.Devices) == 0 {
		return heraldtype.ExplainReason{Code: heraldtype.ExplainNoDevice, Channel: heraldtype.ChannelPush,
			Message: "The user has no registered device."}
	}
	var invalid, optedOut *heraldtype.Device
	for i := range r.Devices {
		dev := &r.Devices[i]
		switch {
		case dev.Status == heraldtype.DeviceActive && dev.PushOptIn:
			return heraldtype.ExplainReason{Code: heraldtype.ExplainSent}
		case dev.Status == heraldtype.DeviceInvalid:
			if invalid == nil || after(dev.InvalidatedAt, invalid.InvalidatedAt) {
				invalid = dev
			}
		default:
			optedOut = dev
		}
	}
	if optedOut != nil {
		return heraldtype.ExplainReason{Code: heraldtype.ExplainDeviceOptedOut, Channel: heraldtype.ChannelPush, DeviceID: optedOut.ID,
			Message: fmt.Sprintf("Device %s has push notifications turned off.", optedOut.ID)}
	}
	return r.invalid(*invalid, nil)
}

func (r Records) device(id string) *heraldtype.Device {
	for i := range r.Devices {
		if r.Devices[i].ID == id {
			return &r.Devices[i]
		}
	}
	return nil
}

// target names where a delivery went: "on push to device d1".
func (r Records) target(d *heraldtype.Delivery) string {
	switch {
	case d.DeviceID != "":
		return fmt.Sprintf("on %s to device %s", d.Channel, d.DeviceID)
	case d.Address != "":
		return fmt.Sprintf("by %s to %s", d.Channel, d.Address)
	}
	return "on " + string(d.Channel)
}

// when formats t in the user's time zone.
func (r Records) when(t time.Time) string {
	return t.In(r.Location).Format(time.RFC3339)
}

func finished(d *heraldtype.Delivery) time.Time {
	if d.FinishedAt != nil {
		return *d.FinishedAt
	}
	return d.UpdatedAt
}

// lastAttempt is the time of the delivery's newest attempt row with
// outcome o.
func lastAttempt(d *heraldtype.Delivery, o heraldtype.AttemptOutcome) *time.Time {
	for i := len(d.Attempts) - 1; i >= 0; i-- {
		if d.Attempts[i].Outcome == o {
			at := d.Attempts[i].At
			return &at
		}
	}
	return nil
}

// lastFailure is the newest attempt that carries the provider's answer.
func lastFailure(d *heraldtype.Delivery) *heraldtype.Attempt {
	for i := len(d.Attempts) - 1; i >= 0; i-- {
		switch d.Attempts[i].Outcome {
		case heraldtype.OutcomeDead, heraldtype.OutcomeRetry:
			return &d.Attempts[i]
		}
	}
	return nil
}

func answer(code, msg string) string {
	switch {
	case code == "" && msg == "":
		return "nothing"
	case msg == "":
		return code
	case code == "":
		return fmt.Sprintf("%q", msg)
	}
	return fmt.Sprintf("%s (%q)", code, msg)
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func addressName(ch heraldtype.Channel) string {
	if ch == heraldtype.ChannelSMS {
		return "phone number"
	}
	return "e-mail address"
}

func after(a, b *time.Time) bool {
	return a != nil && (b == nil || a.After(*b))
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
