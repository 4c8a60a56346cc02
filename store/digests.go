package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Digests is the part of the store that keeps digests (issue 36 item 1;
// docs/ARCHITECTURE.md "Digests"). A trigger of a digest type joins its
// user's open digest of its key inside Enqueue's (or EnqueueTx's)
// transaction (EnqueueParams.Digest); the digest worker claims the due
// ones and fires each: one notification, enqueued in the transaction that
// marks the digest sent. Store embeds it.
type Digests interface {
	// ClaimDigests leases up to p.Limit digests whose window ended
	// (close_at <= p.Now) or that max_items closed, and whose lease (if
	// any) ended: state closed — no trigger joins it any more — lease_owner
	// p.Owner, lease_until p.LeaseUntil. Two concurrent claims never
	// return the same digest. A claimed digest takes no more items; a
	// store may read them in the claim, for claimed digests whose items
	// (not cancelled) total at most p.ReadItems (PostgreSQL does: a round
	// trip fewer per digest); the others' Entries are nil, and the worker
	// reads each one's with ListDigestItems when it builds it, so a batch
	// of full digests is not held in memory at once.
	ClaimDigests(ctx context.Context, p DigestClaimParams) ([]ClaimedDigest, error)
	// FireDigest settles a claimed digest in one transaction, if
	// f.Owner still holds its lease and it is still closed: with f.Enqueue
	// it enqueues that trigger (its idempotency key digest:{id}) and marks
	// the digest sent with the notification's id; with f.Failure, failed
	// with that error; with neither (a digest without items), sent with no
	// notification. fired is false when the guard refused (nothing
	// written).
	FireDigest(ctx context.Context, f DigestFire) (fired bool, res EnqueueResult, err error)
	// FireDigests is FireDigest of each of fs, in one transaction: one
	// commit for a claimed batch (issue 36 item 6). It is all or nothing:
	// an error (a user deleted since, say) writes none of them, and the
	// caller fires them one by one.
	FireDigests(ctx context.Context, fs []DigestFire) ([]DigestFired, error)
	// ListDigests returns a page of digests, newest first, and the cursor
	// of the next page ("" for the last); the filter is checked by
	// CheckDigestFilter.
	ListDigests(ctx context.Context, f heraldtype.DigestFilter) ([]heraldtype.DigestInfo, string, error)
	// GetDigest returns one digest; ENOTFOUND if absent.
	GetDigest(ctx context.Context, id string) (heraldtype.DigestInfo, error)
	// ListDigestItems returns a digest's items in order, but those a
	// cancel took out (none for an unknown digest).
	ListDigestItems(ctx context.Context, id string) ([]DigestItem, error)
	// PruneDigests deletes the digests sent or failed before cutoff, with
	// their items, and returns how many it deleted. Open and closed ones
	// are never deleted.
	PruneDigests(ctx context.Context, cutoff time.Time) (int, error)
}

// Digest states: a trigger joins an open digest; a claim (or max_items,
// or a trigger that finds the window over) closes it; the fire marks it
// sent, or failed when its message could not be rendered.
const (
	DigestOpen   = "open"
	DigestClosed = "closed"
	DigestSent   = "sent"
	DigestFailed = "failed"
)

// DigestParams makes an enqueue join digests instead of writing
// deliveries: each notification of the trigger becomes an item of its
// user's open digest of (type, Key), created when there is none.
type DigestParams struct {
	// Key is the digest key rendered from the trigger's data.
	Key string
	// Window is how long a new digest stays open.
	Window time.Duration
	// MaxItems closes a digest in the statement that adds its MaxItems-th
	// item.
	MaxItems int
	// Immediate: a trigger that opens a digest is sent as a plain
	// notification, and the digest collects the rest of the window.
	Immediate bool
	// NewID gives the id of a digest a notification may open; called once
	// per notification.
	NewID func() string
	// Scheduled maps the users who chose a digest schedule for the type
	// (issue 36 item 2) to the next scheduled time: their notifications
	// join their one digest of the type (key ""), collected (never
	// immediate), which a new digest closes at that time instead of after
	// Window.
	Scheduled map[string]time.Time
	// ScheduledOnly: the type declares no digest, so only the users in
	// Scheduled join digests and the others' notifications are plain
	// (Key, Window and Immediate are unused).
	ScheduledOnly bool
}

// join is how notification n joins a digest: the key, the first-items
// count and the new row's state and close_at; ok is false when it is
// written as a plain notification instead.
func (d *DigestParams) join(user string, now time.Time) (key string, first int, state string, closeAt time.Time, ok bool) {
	if at, scheduled := d.Scheduled[user]; scheduled {
		state, closeAt = DigestNewRow(1, d.MaxItems, now, at.Sub(now))
		return "", 1, state, closeAt, true
	}
	if d.ScheduledOnly {
		return "", 0, "", time.Time{}, false
	}
	first = 1
	if d.Immediate {
		first = 0
	}
	state, closeAt = DigestNewRow(first, d.MaxItems, now, d.Window)
	return d.Key, first, state, closeAt, true
}

// DigestClaimParams parameterises ClaimDigests.
type DigestClaimParams struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// ReadItems bounds the items a claim may read with the digests
	// (ClaimDigests); 0 reads none.
	ReadItems int
}

// ClaimedDigest is a leased digest, with its items once read.
type ClaimedDigest struct {
	heraldtype.DigestInfo
	// Entries are the items, in order (DigestInfo.Items counts them).
	Entries []DigestItem
}

// DigestItem is one trigger a digest holds: the notification it would
// have been (its id, content, channels and priority).
type DigestItem struct {
	Seq          int                  `json:"-"`
	Notification string               `json:"id"`
	Title        string               `json:"title,omitempty"`
	Body         string               `json:"body,omitempty"`
	Data         map[string]string    `json:"data,omitempty"`
	Channels     []heraldtype.Channel `json:"channels,omitempty"`
	Priority     heraldtype.Priority  `json:"priority,omitempty"`
	CreatedAt    time.Time            `json:"-"`
}

// DigestItemContent is the JSON both stores keep of an item built from
// the notification n.
func DigestItemContent(n heraldtype.Notification) (string, error) {
	b, err := json.Marshal(DigestItem{Notification: n.ID, Title: n.Title, Body: n.Body, Data: n.Data,
		Channels: n.Channels, Priority: n.Priority})
	if err != nil {
		return "", fmt.Errorf("digest item %q: %w", n.ID, err)
	}
	return string(b), nil
}

// ParseDigestItem reads what DigestItemContent wrote.
func ParseDigestItem(seq int, content []byte, created time.Time) (DigestItem, error) {
	var it DigestItem
	if err := json.Unmarshal(content, &it); err != nil {
		return it, fmt.Errorf("digest item %d: %w", seq, err)
	}
	it.Seq, it.CreatedAt = seq, created.UTC()
	return it, nil
}

// View is the item as the API shows it.
func (it DigestItem) View() heraldtype.DigestItem {
	return heraldtype.DigestItem{Seq: it.Seq, ID: it.Notification, Title: it.Title, Body: it.Body, Data: it.Data,
		CreatedAt: it.CreatedAt}
}

// DigestFire is one claimed digest's settlement (FireDigest).
type DigestFire struct {
	ID    string
	Owner string
	Now   time.Time
	// Enqueue is the digest's notification; nil for none.
	Enqueue *EnqueueParams
	// Failure, when set, marks the digest failed with it.
	Failure string
	// Cancelled is the digest's count of cancelled items when it was
	// claimed (DigestInfo.Cancelled): the fire applies only if no cancel
	// took an item out since, so a message built before a cancel is never
	// sent. A fire refused for that releases the lease, and the next claim
	// builds the digest again.
	Cancelled int
}

// DigestFired is what FireDigest answers, for one fire of FireDigests.
type DigestFired struct {
	Fired bool
	Res   EnqueueResult
}

// Outcome checks f's enqueue and says what the fire writes on the
// digest: its state (sent, or failed with f.Failure) and the
// notification it made ("" for none), for both stores' FireDigest.
func (f DigestFire) Outcome() (state, notificationID string, err error) {
	if f.Enqueue != nil {
		if err := CheckEnqueue(*f.Enqueue); err != nil {
			return "", "", err
		}
	}
	switch {
	case f.Failure != "":
		return DigestFailed, "", nil
	case f.Enqueue != nil:
		return DigestSent, f.Enqueue.Notifications[0].ID, nil
	}
	return DigestSent, "", nil
}

// CheckDigestParams refuses digest parameters that would write a broken
// row.
func CheckDigestParams(d *DigestParams) error {
	if d == nil {
		return nil
	}
	if (d.Window <= 0 && !d.ScheduledOnly) || d.MaxItems < 1 || d.NewID == nil {
		return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: a digest needs a window, max items and ids")
	}
	return nil
}

// CheckDigestSchedules refuses a scheduled close that is not after now (a
// digest that would be due before it opened).
func CheckDigestSchedules(d *DigestParams, now time.Time) error {
	if d == nil {
		return nil
	}
	for user, at := range d.Scheduled {
		if !at.After(now) {
			return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: the scheduled digest of user %q closes at %s, not after now", user, at)
		}
	}
	return nil
}

// DigestIdempotencyKey is the idempotency key of a digest's notification:
// a fire repeated after a crash (its lease ended, another worker claimed
// it again) finds the key taken and writes nothing new.
func DigestIdempotencyKey(id string) string { return "digest:" + id }

// DigestNamespace is the idempotency namespace of digests' notifications,
// apart from every caller's.
const DigestNamespace = "herald.digest"

// DigestStatements are a store's three statements of a trigger's join,
// run on the trigger's transaction: store/rules' DigestCloseSQL,
// DigestAddSQL and the item's insert.
type DigestStatements interface {
	CloseDigest(ctx context.Context, user, typ, key string, now time.Time) error
	// AddToDigest runs rules.DigestAddSQL; ok is false when it returned no
	// row.
	AddToDigest(ctx context.Context, a DigestAdd) (digest string, items int, ok bool, err error)
	// AddDigestItem writes an item; cancellationKey is its trigger's, for
	// a cancel by key (CancelNotifications).
	AddDigestItem(ctx context.Context, digest string, seq int, item, cancellationKey, content string, now time.Time) error
}

// DigestBatchStatements are DigestStatements that also join many
// notifications of one trigger at once, where a round trip per statement
// is most of a join's cost (PostgreSQL; issue 36 item 6). JoinDigests
// uses them for a trigger of several users.
type DigestBatchStatements interface {
	DigestStatements
	// AddToDigests runs rules.DigestAddManySQL over adds (one type, each
	// user and key once, in user order) and answers, per add in order,
	// what AddToDigest would have.
	AddToDigests(ctx context.Context, adds []DigestAdd) ([]DigestJoined, error)
	// AddDigestItems writes items as AddDigestItem would, at once.
	AddDigestItems(ctx context.Context, items []DigestItemRow, now time.Time) error
}

// DigestJoined is what a join found: the digest, its item count with this
// one (the item's seq), and OK false when the open digest found no
// longer takes items.
type DigestJoined struct {
	Digest string
	Items  int
	OK     bool
}

// DigestItemRow is one item of AddDigestItems.
type DigestItemRow struct {
	Digest                         string
	Seq                            int
	Item, CancellationKey, Content string
}

// DigestNewRow is the state and close_at of a new digest holding first
// items: open until now + window, unless first already reaches maxItems
// (max_items 1 with first: collect), then closed at now.
func DigestNewRow(first, maxItems int, now time.Time, window time.Duration) (state string, closeAt time.Time) {
	if first >= maxItems {
		return DigestClosed, now
	}
	return DigestOpen, now.Add(window)
}

// DigestAdd is one rules.DigestAddSQL: the row proposed if the user has
// no open digest of (Type, Key).
type DigestAdd struct {
	ID, User, Type, Key, State string
	CloseAt, Now               time.Time
	First, MaxItems            int
}

// maxDigestJoinRounds bounds how often a trigger closes and adds again
// when concurrent triggers fill or close the digest it found: each round
// either joins or sees a committed close, so two are enough but for a
// digest filled again at once; past that the trigger fails (the caller
// may retry) rather than loop.
const maxDigestJoinRounds = 5

// JoinDigests makes each notification of p an item of its user's open
// digest of (type, p.Digest.Key) — the one place the digest rule of a
// trigger is decided, for both stores. It returns the indexes of the
// notifications still to be written as plain notifications (those that
// opened a digest with p.Digest.Immediate, and with ScheduledOnly those of
// users without a schedule) and, for the others, the id of
// the digest each joined. Users are visited in id order, the lock order of
// every write that touches several users' digests.
func JoinDigests(ctx context.Context, p EnqueueParams, st DigestStatements) (plain []int, joined map[int]string, err error) {
	d := p.Digest
	order := make([]int, len(p.Notifications))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return strings.Compare(p.Notifications[a].UserID, p.Notifications[b].UserID)
	})
	// What each notification that joins proposes, in user order.
	type candidate struct {
		i       int
		add     DigestAdd
		content string
	}
	var cands []candidate
	for _, i := range order {
		n := p.Notifications[i]
		key, first, state, closeAt, ok := d.join(n.UserID, p.Now)
		if !ok {
			plain = append(plain, i)
			continue
		}
		content, err := DigestItemContent(n)
		if err != nil {
			return nil, nil, err
		}
		cands = append(cands, candidate{i: i, content: content, add: DigestAdd{ID: d.NewID(), User: n.UserID,
			Type: n.Type, Key: key, State: state, CloseAt: closeAt, First: first, MaxItems: d.MaxItems, Now: p.Now}})
	}
	got := make([]DigestJoined, len(cands))
	batch, many := st.(DigestBatchStatements)
	if many = many && len(cands) > 1; many {
		adds := make([]DigestAdd, len(cands))
		for k, c := range cands {
			adds[k] = c.add
		}
		if many = distinctDigestAdds(adds); many {
			if got, err = batch.AddToDigests(ctx, adds); err != nil {
				return nil, nil, err
			}
		}
	}
	for k, c := range cands {
		if got[k].OK {
			continue
		}
		// Alone: no batch, or the open digest the batch found no longer
		// takes items.
		if got[k], err = joinDigest(ctx, st, c.add); err != nil {
			return nil, nil, err
		}
	}
	joined = make(map[int]string, len(cands))
	var items []DigestItemRow
	for k, c := range cands {
		if got[k].Digest == c.add.ID && c.add.First == 0 {
			plain = append(plain, c.i)
			continue
		}
		n := p.Notifications[c.i]
		row := DigestItemRow{Digest: got[k].Digest, Seq: got[k].Items, Item: n.ID, CancellationKey: n.CancellationKey, Content: c.content}
		if many {
			items = append(items, row)
		} else if err := st.AddDigestItem(ctx, row.Digest, row.Seq, row.Item, row.CancellationKey, row.Content, p.Now); err != nil {
			return nil, nil, err
		}
		joined[c.i] = got[k].Digest
	}
	if len(items) > 0 {
		if err := batch.AddDigestItems(ctx, items, p.Now); err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(plain)
	return plain, joined, nil
}

// joinDigest finds or opens a's digest on its own: it closes the open one
// that no longer takes items and adds, again while concurrent triggers
// fill or close the one it found.
func joinDigest(ctx context.Context, st DigestStatements, a DigestAdd) (DigestJoined, error) {
	for round := 0; ; round++ {
		if round == maxDigestJoinRounds {
			return DigestJoined{}, heraldtype.Errorf(heraldtype.EUNAVAILABLE,
				"digest of %q for user %q: closed by concurrent triggers %d times; try again", a.Type, a.User, round)
		}
		if err := st.CloseDigest(ctx, a.User, a.Type, a.Key, a.Now); err != nil {
			return DigestJoined{}, err
		}
		digest, items, ok, err := st.AddToDigest(ctx, a)
		if err != nil || ok {
			return DigestJoined{Digest: digest, Items: items, OK: ok}, err
		}
	}
}

// distinctDigestAdds reports whether adds are of one type and name each
// user and key once: one statement can then add them all (a row may be
// updated only once by a statement).
func distinctDigestAdds(adds []DigestAdd) bool {
	seen := make(map[[2]string]struct{}, len(adds))
	for _, a := range adds {
		k := [2]string{a.User, a.Key}
		if _, dup := seen[k]; dup || a.Type != adds[0].Type {
			return false
		}
		seen[k] = struct{}{}
	}
	return true
}

// DigestResult is the EnqueueResult of a trigger that JoinDigests split:
// res is what writing the plain notifications (p.Notifications at plain)
// produced; the result lists every notification of p in order.
func DigestResult(p EnqueueParams, plain []int, joined map[int]string, res EnqueueResult) EnqueueResult {
	counts := make(map[string]int, len(res.Notifications))
	for _, n := range res.Notifications {
		counts[n.ID] = n.Deliveries
	}
	out := EnqueueResult{Notifications: make([]EnqueuedNotification, len(p.Notifications)), Inbox: res.Inbox}
	for i, n := range p.Notifications {
		out.Notifications[i] = EnqueuedNotification{ID: n.ID, UserID: n.UserID, Deliveries: counts[n.ID], Digest: joined[i]}
	}
	return out
}

// PlainPart is p with only the notifications at plain and no digest.
func PlainPart(p EnqueueParams, plain []int) EnqueueParams {
	q := p
	q.Digest = nil
	q.Notifications = make([]heraldtype.Notification, len(plain))
	for k, i := range plain {
		q.Notifications[k] = p.Notifications[i]
	}
	return q
}

// Page sizes of ListDigests (DigestFilter.Limit: 0 is the default, larger
// is capped).
const (
	DefaultDigestPage = 50
	MaxDigestPage     = 200
)

// CheckDigestFilter validates the filter of ListDigests and returns its
// page size and the id the page starts below ("" for the first page).
func CheckDigestFilter(f heraldtype.DigestFilter) (limit int, below string, err error) {
	switch f.State {
	case "", DigestOpen, DigestClosed, DigestSent, DigestFailed:
	default:
		return 0, "", heraldtype.FieldErrorf("state", "%q must be open, closed, sent or failed", f.State)
	}
	if below, err = decodeKeyCursor(f.Cursor); err != nil {
		return 0, "", err
	}
	if limit, err = pageSize(f.Limit, DefaultDigestPage, MaxDigestPage); err != nil {
		return 0, "", err
	}
	return limit, below, nil
}

// DigestListPage trims digests read newest first with a LIMIT of limit+1
// to the page, and returns the next page's cursor.
func DigestListPage(ds []heraldtype.DigestInfo, limit int) ([]heraldtype.DigestInfo, string) {
	return page(ds, limit, func(d heraldtype.DigestInfo) string {
		return base64.RawURLEncoding.EncodeToString([]byte(d.ID))
	})
}
