package dispatch

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
)

// Error codes the worker itself records, next to the providers' own codes.
const (
	// CodeDeviceRemoved: the delivery's device was deleted before the send.
	CodeDeviceRemoved = "device_removed"
	// CodeTokenInvalid: the device's token was invalidated before the send.
	CodeTokenInvalid = "token_invalid"
	// CodeOptedOut: the device turned push off before the send.
	CodeOptedOut = "opted_out"
	// CodeNoProvider: no sender is configured for the delivery's provider.
	CodeNoProvider = "no_provider"
	// CodeInvalidJob: the store returned a job without its notification.
	CodeInvalidJob = "invalid_job"
	// CodeTimeout: the send did not answer within SendTimeout.
	CodeTimeout = "timeout"
	// CodeRenderFailed: the delivery's template did not render, or
	// rendered past its channel's limit (Config.Render).
	CodeRenderFailed = "render_failed"
)

// RenderFailed is Config.Render's error when the template or the data it
// was given is at fault: the delivery cannot be sent, now or later.
type RenderFailed struct{ Reason string }

func (e *RenderFailed) Error() string { return e.Reason }

// renderRetry is how long a delivery whose render could not read what it
// needs (the store) waits before it is claimed again.
const renderRetry = 5 * time.Second

// heraldCodes are the codes Herald itself records (the worker's and the
// policy's), declared to the metrics' code label next to the providers'.
var heraldCodes = []string{CodeDeviceRemoved, CodeTokenInvalid, CodeOptedOut, CodeNoProvider, CodeInvalidJob,
	CodeTimeout, CodeRenderFailed, policy.CodeTypeDisabled, policy.CodeChannelDisabled, policy.CodeChannelOptedOut,
	policy.CodeDuplicate, policy.CodeDailyCap, policy.CodePolicyError, heraldtype.CodeQuietHours}

// run processes one claimed delivery and buffers its outcome. It owns one
// send slot and releases it when done. ctx bounds the send; claimCtx ends
// when the worker stops claiming, which cuts a throttle wait short. cw is
// when the claim ran, for the delivery's spans (tracing.go).
func (w *Worker) run(ctx, claimCtx context.Context, job heraldtype.Job, pre *policy.Prefetched, cw *claimWindow) {
	defer w.releaseSlot()
	defer w.flights.remove(job.Delivery.ID)
	var o store.Outcome
	var ok bool
	if cw != nil && w.traced(&job) {
		var span trace.Span
		ctx, span = w.startDelivery(ctx, &job, cw)
		o, ok = w.attempt(ctx, claimCtx, job, pre)
		endDelivery(span, &o, ok)
	} else {
		o, ok = w.attempt(ctx, claimCtx, job, pre)
	}
	switch {
	case !ok:
	case o.Row().Inbox:
		w.completer.addInbox(o, job.Delivery.UserID)
	default:
		w.completer.add(o)
	}
	if ok && w.cfg.RollupInterval > 0 {
		w.rollup.record(job.Delivery.Channel, &o)
	}
	w.stop.count(&o, ok)
}

// attempt decides the outcome of one claimed delivery, sending it if it may
// be sent. It reports false when no outcome must be recorded: the worker is
// shutting down mid-send. The delivery's lease then expires and the reaper
// decides by its guarantee (S1.3): that is the designed at_least_once
// duplicate window. A lease found lost before the send still gets its
// outcome (lostUnsent), which the store records only as a late report.
func (w *Worker) attempt(ctx, claimCtx context.Context, job heraldtype.Job, pre *policy.Prefetched) (store.Outcome, bool) {
	d := &job.Delivery
	now := w.cfg.Now()
	if r, refused := w.screen(&job); refused {
		return w.refuse(d, now, r), true
	}
	if d.Channel == heraldtype.ChannelInApp {
		return w.inbox(ctx, &job, pre, now)
	}
	sender := w.cfg.Senders[d.Provider]
	if w.cfg.Policy != nil {
		if o, record, done := w.policy(ctx, &job, pre, now); done {
			return o, record
		}
	}

	if w.cfg.Render != nil && job.Notification.TemplateVersion > 0 {
		n, err := w.cfg.Render(ctx, &job)
		var failed *RenderFailed
		switch {
		case errors.As(err, &failed):
			return w.dead(d, w.cfg.Now(), CodeRenderFailed, failed.Reason), true
		case err != nil:
			if ctx.Err() != nil {
				return store.Outcome{}, false
			}
			w.log.Warn("render: the delivery goes back to the queue", "delivery", d.ID, "error", err)
			now = w.cfg.Now()
			return w.release(d, now, now.Add(renderRetry)), true
		case n != nil:
			job.Notification = n
		}
	}

	// The policy may have waited on its store (a type lookup, preferences
	// the prefetch could not read) for up to StoreTimeout: the guards below
	// read the clock again, never trusting a time taken before it.
	now = w.cfg.Now()
	// need is the lease a send must have left when it starts: its timeout,
	// then the time to record its outcome (issue 24 item 2).
	need := w.cfg.SendTimeout + w.cfg.OutcomeMargin

	// Wait for the provider's throttle, but never past the point where the
	// send could still finish and be recorded inside the lease: such a
	// delivery goes back to the queue unattempted, due when the throttle
	// would let it go.
	th := w.throttleFor(sender, &job)
	wait, cancel := th.reserve(now)
	lease, lost := w.flights.lease(d.ID)
	if lost {
		cancel()
		return w.lostUnsent(d, now), true
	}
	if wait > 0 {
		if now.Add(wait + need).After(lease) {
			cancel()
			return w.release(d, now, now.Add(wait)), true
		}
		if !w.sleep(claimCtx, wait) {
			cancel()
			if ctx.Err() != nil {
				return store.Outcome{}, false
			}
			// A graceful stop: hand the delivery back rather than hold
			// Stop up for the throttle.
			return w.release(d, now, now.Add(wait)), true
		}
		now = w.cfg.Now()
		if lease, lost = w.flights.lease(d.ID); lost {
			return w.lostUnsent(d, now), true
		}
	}
	if lease.Sub(now) < need {
		return w.release(d, now, now), true
	}

	msg := &heraldtype.Message{
		Key:          heraldtype.DeliveryKey(d.NotificationID, d.ID),
		Notification: job.Notification,
		Device:       job.Device,
		Address:      d.Address,
	}
	if d.Channel == heraldtype.ChannelEmail && w.cfg.ListUnsubscribe != nil {
		msg.ListUnsubscribe = w.cfg.ListUnsubscribe(ctx, &job)
	}
	if d.Channel == heraldtype.ChannelEmail && w.cfg.EmailHTML != nil {
		msg.HTML = w.cfg.EmailHTML(ctx, &job)
	}
	sendCtx, cancelSend := context.WithTimeout(ctx, w.cfg.SendTimeout)
	var sendSpan trace.Span
	if w.traced(&job) {
		sendCtx, sendSpan = w.startSend(sendCtx, &job)
	}
	start := w.cfg.Now()
	id, err := sender.Send(sendCtx, msg)
	end := w.cfg.Now()
	timedOut := errors.Is(sendCtx.Err(), context.DeadlineExceeded)
	cancelSend()
	if sendSpan != nil {
		endSend(sendSpan, err)
	}
	if err != nil && ctx.Err() != nil {
		// Our own shutdown cut the send short: whether the provider got
		// it is unknown, so the reaper decides, by guarantee.
		return store.Outcome{}, false
	}
	th.observe(end)
	return w.decide(&job, th, start, end, id, err, timedOut), true
}

// refusal is why a claimed delivery cannot be sent whatever the policy
// says (screen): it is skipped (its device) or ends dead with code.
type refusal struct {
	code, msg string
	skip      bool
}

// screen reports why job cannot be sent whatever the policy says, if it
// cannot: its device was deleted, invalidated or opted out of push, its
// SMS or e-mail has no address, its notification is missing, or no sender
// serves its provider. It reads only the job and the configuration, so
// prefetch runs it too, to keep such deliveries out of the policy's batch
// (they must not spend a slot of the daily cap).
func (w *Worker) screen(job *heraldtype.Job) (refusal, bool) {
	d := &job.Delivery
	switch {
	case d.Channel == heraldtype.ChannelInApp:
		// The inbox needs no device, address or sender.
	case d.Channel == heraldtype.ChannelPush || d.Channel == "":
		switch dev := job.Device; {
		case dev == nil:
			return refusal{code: CodeDeviceRemoved, msg: "the device was deleted", skip: true}, true
		case dev.Status == heraldtype.DeviceInvalid:
			return refusal{code: CodeTokenInvalid, msg: "the device's token is invalid: " + dev.InvalidReason, skip: true}, true
		case !dev.PushOptIn:
			return refusal{code: CodeOptedOut, msg: "the device opted out of push", skip: true}, true
		}
	case d.Address == "":
		// SMS and email go to the address captured at enqueue.
		return refusal{code: CodeInvalidJob, msg: "the " + string(d.Channel) + " delivery has no address"}, true
	}
	if job.Notification == nil {
		return refusal{code: CodeInvalidJob, msg: "the claimed job has no notification"}, true
	}
	if _, ok := w.cfg.Senders[d.Provider]; !ok && d.Channel != heraldtype.ChannelInApp {
		return refusal{code: CodeNoProvider, msg: "no sender is configured for provider " + d.Provider}, true
	}
	return refusal{}, false
}

// refused reports whether screen refuses j.
func (w *Worker) refused(j heraldtype.Job) bool {
	_, refused := w.screen(&j)
	return refused
}

// refuse is the outcome of a delivery screen refused.
func (w *Worker) refuse(d *heraldtype.Delivery, now time.Time, r refusal) store.Outcome {
	if r.skip {
		return w.skip(d, now, r.code, r.msg)
	}
	if r.code == CodeNoProvider {
		w.noProvider(d.Provider)
	}
	return w.dead(d, now, r.code, r.msg)
}

// inbox decides an in_app delivery that was scheduled for later and is
// now due (issue 22): the policy's preference check at this time (the
// inbox takes no other step of it), then store.InboxSent, which writes
// the item in the transaction that records the outcome. Nothing is sent,
// so no provider, throttle or send timeout is involved.
func (w *Worker) inbox(ctx context.Context, job *heraldtype.Job, pre *policy.Prefetched, now time.Time) (store.Outcome, bool) {
	if w.cfg.Policy != nil {
		if o, record, done := w.policy(ctx, job, pre, now); done {
			return o, record
		}
	}
	return w.outcome(&job.Delivery, now, store.InboxSent{}), true
}

// decide turns a provider's answer into an outcome; th is the throttle the
// send went through. Providers classify; only the worker decides (S0.3).
func (w *Worker) decide(job *heraldtype.Job, th *throttle, start, end time.Time, providerID string, err error, timedOut bool) store.Outcome {
	d := &job.Delivery
	m := w.cfg.Metrics
	p := m.Provider(d.Provider) // the provider label; d.Provider picks the sender
	latency := end.Sub(start)
	m.SendLatency.WithLabelValues(p).Observe(latency.Seconds())
	if err == nil {
		// DeviceClean: nothing to reset, the store skips the device write
		// (one statement per outcome batch on PostgreSQL, ~7 µs a delivery).
		sent := store.Sent{ProviderMessageID: providerID, Latency: latency,
			DeviceClean: job.Device != nil && job.Device.FailCount == 0}
		m.Sent.WithLabelValues(p).Inc()
		// End-to-end latency runs from when this attempt was due (its
		// run_at: the send time, or the retry time) to the provider's
		// acceptance, so it measures the queue and the send, not the
		// backoff the schedule asked for.
		m.EndToEndLatency.WithLabelValues(p).Observe(max(end.Sub(d.RunAt), 0).Seconds())
		return w.outcome(d, end, sent)
	}

	se := heraldtype.AsSendError(err)
	if timedOut && !isSendError(err) {
		se = &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: CodeTimeout, Message: err.Error(), Err: err}
	}
	f := store.Failure{ErrorCode: se.Code, Error: se.Message, RetryAfter: se.RetryAfter, Latency: latency}
	if f.Error == "" {
		f.Error = se.Error()
	}
	code := m.Code(se.Code) // the code label, bounded (metrics.Labels)
	m.Failed.WithLabelValues(p, code).Inc()

	// An at_most_once delivery whose send failed ambiguously (a timeout or
	// a transport error, after which the provider may hold the message) is
	// never retried: it is unknown, like one whose lease expired mid-send.
	// A miss beats a duplicate for these types (S1.3).
	if d.Guarantee == heraldtype.AtMostOnce && (timedOut || !isSendError(err)) {
		m.Unknown.Inc()
		return w.outcome(d, end, store.Unknown{Failure: f})
	}

	// A dead token ends the delivery and invalidates the device, whatever
	// class the provider gave it; no other failure touches the device
	// (S0.3 note: an auth or configuration error is the sender's fault).
	if se.TokenInvalid && job.Device != nil {
		m.Dead.WithLabelValues(p, code).Inc()
		m.InvalidatedTokens.WithLabelValues(p, code).Inc()
		return w.outcome(d, end, store.Dead{Failure: f, InvalidReason: se.Code})
	}
	// An address that asked not to be contacted (Twilio 21610 STOP) ends
	// the delivery and is suppressed on the channel until it opts in again.
	if se.Suppress && d.Address != "" {
		m.Dead.WithLabelValues(p, code).Inc()
		return w.outcome(d, end, store.Dead{Failure: f, SuppressAddress: true, SuppressReason: se.Code})
	}
	class := se.Class
	switch class {
	case heraldtype.ClassPermanent:
		m.Dead.WithLabelValues(p, code).Inc()
		return w.outcome(d, end, store.Dead{Failure: f})
	case heraldtype.ClassThrottled:
		m.Throttled.WithLabelValues(p).Inc()
		if th.quota(end) {
			w.log.Warn("dispatch: provider over quota; slowing it down", "provider", d.Provider,
				"scope", th.scope, "limit_per_second", th.currentLimit(end))
		}
	default:
		// An unknown class is retried like a temporary failure: attempts
		// stay bounded by MaxAttempts.
		class = heraldtype.ClassTemporary
	}
	if d.Attempt >= d.MaxAttempts {
		m.Dead.WithLabelValues(p, code).Inc()
		w.log.Error("dispatch: delivery dead after its last attempt", "delivery_id", d.ID,
			"provider", d.Provider, "attempts", d.Attempt, "code", se.Code, "err", f.Error)
		return w.outcome(d, end, store.Dead{Failure: f})
	}
	delay := max(w.cfg.Retry[class].Delay(d.Attempt, w.cfg.Rand()), se.RetryAfter)
	m.Retried.WithLabelValues(p, code).Inc()
	return w.outcome(d, end, store.Retry{RunAt: end.Add(delay), Failure: f})
}

func isSendError(err error) bool {
	var se *heraldtype.SendError
	return errors.As(err, &se)
}

// outcome is the outcome of this worker's lease on d: at at, it moves d
// to.
func (w *Worker) outcome(d *heraldtype.Delivery, at time.Time, to store.Transition) store.Outcome {
	return store.Outcome{DeliveryID: d.ID, Owner: w.cfg.Owner, Attempt: d.Attempt, At: at}.To(to)
}

func (w *Worker) skip(d *heraldtype.Delivery, now time.Time, code, msg string) store.Outcome {
	w.cfg.Metrics.Skipped.WithLabelValues(w.cfg.Metrics.Code(code)).Inc()
	return w.outcome(d, now, store.Skipped{ErrorCode: code, Error: msg})
}

func (w *Worker) dead(d *heraldtype.Delivery, now time.Time, code, msg string) store.Outcome {
	m := w.cfg.Metrics
	m.Dead.WithLabelValues(m.Provider(d.Provider), m.Code(code)).Inc()
	return w.outcome(d, now, store.Dead{Failure: store.Failure{ErrorCode: code, Error: msg, NotSent: true}})
}

// lostUnsent is the outcome of a delivery whose lease the heartbeat found
// taken (reaped, or claimed by another worker) before its send started: a
// release the store's lease guard ignores, recorded instead as a late
// report that this worker never sent it (issue 24 item 3).
func (w *Worker) lostUnsent(d *heraldtype.Delivery, now time.Time) store.Outcome {
	return w.release(d, now, now)
}

// release returns a delivery to the queue without counting an attempt.
func (w *Worker) release(d *heraldtype.Delivery, now, runAt time.Time) store.Outcome {
	return w.outcome(d, now, store.Released{RunAt: runAt})
}

// noProvider logs a missing sender once per provider name: it is a
// configuration error, and one line says it as well as a million.
func (w *Worker) noProvider(name string) {
	w.mu.Lock()
	seen := w.missing[name]
	w.missing[name] = true
	w.mu.Unlock()
	if !seen {
		w.log.Error("dispatch: no sender configured for provider; its deliveries end dead", "provider", name, "code", CodeNoProvider)
	}
}
