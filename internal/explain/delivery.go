package explain

import (
	"fmt"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// delivery explains one delivery from its state, its codes and its
// attempts.
func (r Records) delivery(d *heraldtype.Delivery) []heraldtype.ExplainReason {
	rs := heraldtype.ExplainReason{Channel: d.Channel, DeliveryID: d.ID, DeviceID: d.DeviceID, Address: d.Address, State: d.State,
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
		if d.LastErrorCode == codeRenderFailed {
			rs.Code = heraldtype.ExplainRenderFailed
			rs.Message = fmt.Sprintf("It was not sent %s: its template did not render (%s).", on, d.LastError)
			break
		}
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
	case heraldtype.StateCancelled:
		rs.Code = heraldtype.ExplainCancelled
		rs.Message = fmt.Sprintf("It was not sent %s: its notification was %s at %s.", on, d.LastError, r.when(finished(d)))
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
			rs.Message = fmt.Sprintf("It was not sent %s: the user's daily cap of %d was reached on %s (their local day); %s counted toward it.",
				on, c.Limit, c.Day, plural(len(c.Counted), "notification"))
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
	codeRenderFailed  = "render_failed"
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

// target names where a delivery went: "on push to device d1". An address
// stays out of the sentence (it is the reason's Address, which the HTTP
// API masks for a caller that may not see it).
func (r Records) target(d *heraldtype.Delivery) string {
	if d.DeviceID != "" {
		return fmt.Sprintf("on %s to device %s", d.Channel, d.DeviceID)
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

func attempts(n int) string { return plural(n, "attempt") }

// plural counts n things: "1 attempt", "3 attempts".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
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
