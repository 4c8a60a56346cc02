// Package heraldclient is the typed Go client of Herald's HTTP API, for a
// program that talks to a remote Herald (a backend that triggers
// notifications, an app's server that registers devices, an operator's
// tool). A program that embeds Herald uses herald.Client directly.
//
//	c, err := heraldclient.New("https://herald.example.com", heraldclient.WithAPIKey(key))
//	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{
//		UserID: "u1", Type: "order_shipped", Title: "Your order is on its way",
//	})
//	n, err := c.GetNotification(ctx, res.ID)
//
// # Operations
//
// A method per operation of the API (api/openapi.yaml), each taking a
// context.Context first and returning typed values: the API's own
// vocabulary from heraldtype (User, Device, Delivery, InboxItem, Rule,
// Reminder, …) and this package's copies, with the same JSON, of the
// request and page types that live in the server's root package, which a
// remote client does not import: the package depends on the standard
// library and heraldtype only.
//
// Left out, because they are not for a program to call: GET /metrics
// (Prometheus scrapes it), the one-click unsubscribe pages under
// /v1/unsubscribe/{token} (a mail client follows the link), an e-mail's
// open pixel and tracked links under /t/o/ and /t/c/ (a mail reader
// fetches and follows them), the Twilio
// status callback (Twilio calls it, signed), the inbox's WebSocket (the
// same stream as InboxStream's SSE, for browsers), GET /openapi.yaml
// (the document OpenAPI returns as JSON), and the web SDK's files and
// example page under /sdk/v1/ and /sdk/example (a browser loads them;
// SDKIntegrity names them). Do calls any operation by its
// path, for one this package does not know yet or a body the caller
// already holds as JSON.
//
// # Errors
//
// An answer with a status of 300 or more is an *Error: the API's stable
// Code (the Code… constants), its Message, the request Field at fault,
// the server's RequestID and the RetryAfter it gave. Read it with
// errors.As or IsCode. Anything else is a transport failure, or the
// context's error when the context ended.
//
// # Retries
//
// Calls that are safe to repeat (RetryPolicy documents which) are retried
// after a connection failure or an answer of 429, 502, 503 or 504, with
// exponential backoff and jitter, waiting the server's Retry-After when
// it gives one (capped by RetryPolicy.MaxBackoff), never past the
// context's deadline. Every Trigger carries an Idempotency-Key — the
// caller's, or one made for the call — so a retry after a lost answer is
// answered with the first trigger's notifications (TriggerResult.Replayed)
// and never sends twice.
//
// # Lists
//
// A paged list has a method that reads one page (ListDeliveries: its items
// and NextCursor, "" on the last page) and an iterator that walks them all
// (Deliveries), an iter.Seq2 whose error, if any, is its last element:
//
//	for d, err := range c.Deliveries(ctx, heraldtype.DeliveryFilter{State: heraldtype.StateDead}) {
//		if err != nil {
//			return err
//		}
//		…
//	}
//
// # The inbox stream
//
// InboxStream follows a user's in-app inbox over Server-Sent Events and
// yields each new item; when the connection drops, or the server ends the
// stream to shut down, it reconnects with Last-Event-ID, so no item is
// lost or repeated, until the context ends:
//
//	for ev, err := range c.InboxStream(ctx, "u1", heraldclient.StreamOptions{}) {
//		if err != nil {
//			return err
//		}
//		show(ev.Item)
//	}
//
// With StreamOptions.States it also yields the user's unread and unseen
// counts (ev.State set) whenever an item is read, seen, clicked or
// archived on any device, so a badge stays right without polling.
package heraldclient
