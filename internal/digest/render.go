// Package digest gathers a notification type's triggers into one
// notification per user and key (issue 36 item 1; docs/ARCHITECTURE.md
// "Digests"): it validates a type's digest, renders a digest's key from a
// trigger's data and its message from the items, and runs the Worker
// every instance runs, which claims due digests and fires each — its
// notification enqueued in the transaction that marks it sent.
package digest

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/store"
)

// Limits of a type's digest.
const (
	// MinWindow and MaxWindow bound a digest's window: under a second is
	// no digest, and a week is the longest a trigger may wait.
	MinWindow = time.Second
	MaxWindow = 7 * 24 * time.Hour
	// MaxKeyBytes bounds a rendered key (and a key template).
	MaxKeyBytes = 255
	// MaxTemplateBytes bounds the title and body templates, as a rule's.
	MaxTemplateBytes = 4000
)

// Normalize validates d and fills its defaults: max_items maxItems (the
// deployment's limit) when zero, first collect. Each refusal is
// invalid_argument naming its field under "digest.".
func Normalize(d *heraldtype.Digest, maxItems int, lim tmpl.Limits) error {
	switch {
	case d.Window == 0:
		return heraldtype.FieldErrorf("digest.window", "is required (a duration such as 10m)")
	case d.Window < MinWindow || d.Window > MaxWindow:
		return heraldtype.FieldErrorf("digest.window", "must be between 1s and 7 days, got %s", d.Window)
	}
	if d.MaxItems == 0 {
		d.MaxItems = maxItems
	}
	if d.MaxItems < 1 || d.MaxItems > maxItems {
		return heraldtype.FieldErrorf("digest.max_items", "must be between 1 and %d (max_digest_items), got %d", maxItems, d.MaxItems)
	}
	switch d.First {
	case "":
		d.First = heraldtype.DigestFirstCollect
	case heraldtype.DigestFirstCollect, heraldtype.DigestFirstImmediate:
	default:
		return heraldtype.FieldErrorf("digest.first", "%q must be immediate or collect", d.First)
	}
	if len(d.Key) > MaxKeyBytes {
		return heraldtype.FieldErrorf("digest.key", "must be at most %d bytes", MaxKeyBytes)
	}
	if d.Title == "" && d.Body == "" {
		return heraldtype.FieldErrorf("digest.title", "a digest needs a title or a body template")
	}
	for _, f := range []struct{ name, text string }{{"digest.key", d.Key}, {"digest.title", d.Title}, {"digest.body", d.Body}} {
		if len(f.text) > MaxTemplateBytes {
			return heraldtype.FieldErrorf(f.name, "must be at most %d bytes", MaxTemplateBytes)
		}
		if _, err := message.ParseText(f.name, f.text, lim); err != nil {
			return heraldtype.FieldErrorf(f.name, "is not a valid template: %v", err)
		}
	}
	return nil
}

// Key renders a digest's key template over a trigger's data (each data
// field by name: {{.post_id}}) under a budget of its own. A field the
// data lacks, a key over budget or longer than MaxKeyBytes is
// invalid_argument on "data", since the trigger is what lacks it.
func Key(ctx context.Context, typ string, d heraldtype.Digest, data map[string]string, lim tmpl.Limits) (string, error) {
	if d.Key == "" {
		return "", nil
	}
	t, err := message.ParseText("digest.key", d.Key, lim)
	if err != nil {
		return "", heraldtype.FieldErrorf("data", "the digest key of type %q no longer parses: %v", typ, err)
	}
	if data == nil {
		data = map[string]string{}
	}
	key, err := t.Execute(tmpl.NewBudget(ctx, lim), data, MaxKeyBytes)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", heraldtype.FieldErrorf("data", "the digest key of type %q cannot be rendered from this trigger's data: %v", typ, err)
	}
	if !utf8.ValidString(key) {
		return "", heraldtype.FieldErrorf("data", "the digest key of type %q renders invalid UTF-8", typ)
	}
	return key, nil
}

// View is what a digest's title and body templates see.
type View struct {
	// Count is the number of items.
	Count int
	// Items are the triggers in the order they came.
	Items []Item
	// Key is the digest's key.
	Key string
	// Title, Body and Data are the first item's.
	Title, Body string
	Data        map[string]string
}

// Item is one trigger a digest gathered.
type Item struct {
	Title, Body string
	Data        map[string]string
	CreatedAt   time.Time
}

// NewView builds the templates' view of a claimed digest.
func NewView(c store.ClaimedDigest) View {
	v := View{Count: len(c.Entries), Key: c.Key, Items: make([]Item, len(c.Entries)), Data: map[string]string{}}
	for i, e := range c.Entries {
		data := e.Data
		if data == nil {
			data = map[string]string{}
		}
		v.Items[i] = Item{Title: e.Title, Body: e.Body, Data: data, CreatedAt: e.CreatedAt}
	}
	if len(v.Items) > 0 {
		v.Title, v.Body, v.Data = v.Items[0].Title, v.Items[0].Body, v.Items[0].Data
	}
	return v
}

// Render renders a digest's title and body for its user r (number,
// currency, plural and date in r's locale and zone) under one budget (the
// message's, as a rule's title and body share theirs), each at most
// maxTitle and maxBody bytes.
func Render(ctx context.Context, d heraldtype.Digest, v View, r message.Recipient, lim tmpl.Limits, maxTitle, maxBody int) (title, body string, err error) {
	b := tmpl.NewBudget(ctx, lim)
	render := func(name, text string, max int) (string, error) {
		if text == "" {
			return "", nil
		}
		t, err := message.ParseText(name, text, lim)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		out, err := t.ExecuteEnv(b, v, message.Env(r), max)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return out, nil
	}
	if title, err = render("digest.title", d.Title, maxTitle); err != nil {
		return "", "", err
	}
	if body, err = render("digest.body", d.Body, maxBody); err != nil {
		return "", "", err
	}
	if title == "" && body == "" {
		return "", "", fmt.Errorf("digest.title: the title and body render empty")
	}
	return title, body, nil
}

// DefaultMessage is the message of a digest whose type declares no digest
// templates (a user's scheduled digest of a plain type, issue 36 item 2):
// one item is sent as it came; several have the first item's title (or
// body) followed by "(+N more)" as title, and one line per item (its
// title, else its body) as body, cut at a line's end to fit maxBody with a
// last line "… and N more".
func DefaultMessage(v View, maxTitle, maxBody int) (title, body string) {
	if v.Count == 0 {
		return "", ""
	}
	if v.Count == 1 {
		return cut(v.Title, maxTitle), cut(v.Body, maxBody)
	}
	head := cmp.Or(v.Title, v.Body)
	more := fmt.Sprintf(" (+%d more)", v.Count-1)
	title = cut(head, maxTitle-len(more)) + more
	var b strings.Builder
	for i, it := range v.Items {
		line := cut(cmp.Or(it.Title, it.Body), maxBody)
		rest := fmt.Sprintf("… and %d more", v.Count-i)
		sep := 0
		if i > 0 {
			sep = 1
		}
		// Keep room for the closing line unless this is the last item.
		need := b.Len() + sep + len(line)
		if i < v.Count-1 {
			need += 1 + len(fmt.Sprintf("… and %d more", v.Count-i-1))
		}
		if need > maxBody {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(rest)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return title, b.String()
}

// cut shortens s to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
