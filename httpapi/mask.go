package httpapi

import (
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// Who may see what in a delivery or a notification (issue 23, item 6).
// notifications:read and deliveries:read are for operating the queue; a
// user's e-mail address and phone number belong to users:read, so a key
// without it sees them masked (a***@example.com, +1555***0001). A
// trigger's idempotency key is a client's secret-ish handle on its own
// requests: only admin sees it, since a notification does not record the
// key that created it. The rules are applied here, once, to every answer
// that carries a delivery or a notification, whatever route serves it.
type visibility struct {
	addresses       bool
	idempotencyKeys bool
}

// visibilityFor decides what p may see. A user token (which can reach
// none of these answers today) sees neither.
func visibilityFor(p *principal) visibility {
	if p == nil || p.userID != "" {
		return visibility{}
	}
	return visibility{
		addresses:       auth.Grants(p.scopes, auth.ScopeUsersRead),
		idempotencyKeys: auth.Grants(p.scopes, auth.ScopeAdmin),
	}
}

// notification hides what v does not allow in n, in place.
func (v visibility) notification(n *herald.NotificationStatus) {
	if !v.idempotencyKeys {
		n.IdempotencyKey = ""
	}
	v.deliveries(n.Deliveries)
}

// deliveries masks each delivery's address unless v allows it, in place.
func (v visibility) deliveries(ds []heraldtype.Delivery) {
	for i := range ds {
		v.delivery(&ds[i])
	}
}

// delivery masks d's address unless v allows it, in place.
func (v visibility) delivery(d *heraldtype.Delivery) {
	if !v.addresses {
		d.Address = maskAddress(d.Channel, d.Address)
	}
}

// maskAddress shows enough of an address to tell two apart in an
// operator's listing and not enough to contact anyone: an e-mail
// address keeps the first character of its local part and its domain
// (a***@example.com), a phone number its first five and last four
// characters (+1555***0001), or a quarter at each end when it is shorter.
func maskAddress(ch heraldtype.Channel, addr string) string {
	if addr == "" {
		return ""
	}
	if ch == heraldtype.ChannelEmail {
		if at := strings.LastIndexByte(addr, '@'); at > 0 {
			return addr[:1] + "***" + addr[at:]
		}
	}
	head, tail := 5, 4
	if len(addr) < 12 {
		head, tail = len(addr)/4, len(addr)/4
	}
	return addr[:head] + "***" + addr[len(addr)-tail:]
}
