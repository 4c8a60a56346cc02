// Package callout calls an operator's HTTP endpoint: one home for "POST a
// JSON body to a URL, within a timeout, reading at most so many bytes of
// the answer". A campaign's content fetch (S3.7) and a rule's audience
// webhook (issue 20 item 3, S3.3) go through it, so both bound a slow or a
// chatty endpoint the same way, refuse the same URLs, and reach the
// network only through internal/outbound's guard (issue 31 item 2).
//
// Every error it returns is an *Error whose text a caller with the right
// scope may read (a dry run, a run's last_error): the URL with its query
// redacted, a stable code, and nothing of the network behind the URL.
package callout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/redact"
)

// MaxURLLength bounds an endpoint's URL.
const MaxURLLength = 2048

// Codes of an *Error.
const (
	CodeRefused   = "callout_refused"    // the guard refused the address or a redirect
	CodeFailed    = "callout_failed"     // no HTTP answer (the detail is in the log)
	CodeStatus    = "callout_status"     // an answer other than 2xx
	CodeTooLarge  = "callout_too_large"  // the answer is longer than allowed
	CodeBadAnswer = "callout_bad_answer" // the answer does not decode, or breaks a bound
	CodeSecret    = "callout_secret"     // the named secret is not declared here
)

// Error is a failed call.
type Error struct {
	Code    string
	Message string // "POST <redacted URL>: …"
	err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap reaches the cause (for errors.Is on a cancelled context); its
// text is never part of Message.
func (e *Error) Unwrap() error { return e.err }

// CheckURL accepts an absolute http or https URL with a host and without
// credentials (a secret in a URL would be shown wherever the definition
// is read back), of at most MaxURLLength bytes.
func CheckURL(raw string) error {
	_, err := checkURL(raw)
	return err
}

func checkURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, fmt.Errorf("must be at most %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, errors.New("must be an http or https URL without credentials")
	}
	return u, nil
}

// CheckHost refuses, when a definition is saved, a URL (which CheckURL
// accepted) whose host this Caller's guard refuses outright: localhost, a
// non-public IP literal outside callout.allow, a numeric host. A name is
// judged when it is dialled.
func (c *Caller) CheckHost(raw string) error {
	u, err := checkURL(raw)
	if err != nil {
		return err
	}
	return c.out.CheckURL(u)
}

// Call is one POST.
type Call struct {
	URL string
	// Timeout bounds the whole call: connecting, sending, reading.
	Timeout time.Duration
	// MaxBytes bounds the answer's body; a longer one is refused unread
	// beyond that.
	MaxBytes int64
	// Secret names an operator-declared secret (Config.Secrets) whose
	// header the call carries; "" for none.
	Secret string
	// Body is sent as JSON.
	Body any
}

// Post makes the call and hands the answer's body, cut at MaxBytes, to
// decode, which reads it as a stream (the answer is never held whole). An
// error decode returns is the answer's fault (callout_bad_answer) and its
// text is kept — decode must not quote the body — unless the body ran past
// MaxBytes (callout_too_large). Each error is temporary as far as callout
// knows; the caller decides whether to try again.
func (c *Caller) Post(ctx context.Context, call Call, decode func(io.Reader) error) error {
	op := "POST " + redact.URL(call.URL)
	fail := func(code, msg string, err error) error {
		return &Error{Code: code, Message: op + ": " + msg, err: err}
	}
	var secret Secret
	if call.Secret != "" {
		s, ok := c.secrets[call.Secret]
		if !ok {
			return fail(CodeSecret, fmt.Sprintf("the secret %q is not declared on this instance (callout.secrets)", call.Secret), nil)
		}
		secret = s
	}
	b, err := json.Marshal(call.Body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, call.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.URL, bytes.NewReader(b))
	if err != nil {
		return fail(CodeFailed, "the URL cannot be called", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if secret.Header != "" {
		req.Header.Set(secret.Header, secret.Value)
	}
	resp, err := c.out.Do(req)
	if err != nil {
		var oe *outbound.Error
		if errors.As(err, &oe) && oe.Code == outbound.CodeRefused {
			return fail(CodeRefused, "refused ("+oe.Reason+")", err)
		}
		return fail(CodeFailed, "failed (no answer within the timeout, or no HTTP answer; the reason is in Herald's log)", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return fail(CodeStatus, fmt.Sprintf("status %d", resp.StatusCode), nil)
	}
	body := &capped{r: resp.Body, left: call.MaxBytes}
	if err := decode(body); err != nil {
		switch {
		case body.over:
			return fail(CodeTooLarge, fmt.Sprintf("the answer is longer than %d bytes", call.MaxBytes), err)
		case ctx.Err() != nil || body.readErr != nil:
			c.out.LogFailure(req, outbound.CodeFailed, errors.Join(body.readErr, ctx.Err()))
			return fail(CodeFailed, "failed while reading the answer (the reason is in Herald's log)", err)
		}
		return fail(CodeBadAnswer, "the answer "+DescribeDecodeError(err), err)
	}
	if body.over {
		return fail(CodeTooLarge, fmt.Sprintf("the answer is longer than %d bytes", call.MaxBytes), nil)
	}
	return nil
}

// capped reads at most left bytes and remembers whether the body went on
// past them, and any error of the transport, so Post tells a too long or
// cut answer from a malformed one.
type capped struct {
	r       io.Reader
	left    int64
	over    bool
	readErr error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		c.readErr = err
	}
	return n, err
}
