package herald

import (
	"slices"

	"github.com/heraldhq/herald/heraldtype"
)

// VAPIDPublicKey returns the VAPID public key of the configured Web Push
// provider (base64url, the form PushManager.subscribe takes as its
// applicationServerKey), for the web app to subscribe with (issue 21 item
// 6). With several, the one web pushes are routed to wins, then the one
// named first; none is not_found.
func (c *Client) VAPIDPublicKey() (string, error) {
	if p, ok := c.cfg.Providers[c.cfg.PushRouting[heraldtype.PlatformWeb]].(VAPIDKeyer); ok {
		return p.VAPIDPublicKey(), nil
	}
	names := make([]string, 0, len(c.cfg.Providers))
	for name := range c.cfg.Providers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if p, ok := c.cfg.Providers[name].(VAPIDKeyer); ok {
			return p.VAPIDPublicKey(), nil
		}
	}
	return "", heraldtype.Errorf(heraldtype.ENOTFOUND, "no Web Push provider is configured (webpush.vapid_public_key and webpush.vapid_private_key)")
}
