package herald

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
)

// Overview reads the delivery pipeline at a glance (the console's
// overview).
func (c *Client) Overview(ctx context.Context) (heraldtype.Overview, error) {
	return heraldtype.Overview{At: c.now().UTC()}, nil
}
