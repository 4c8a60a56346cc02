package rules_test

import (
	"errors"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/rules"
)

// A suppression is deleted on an addressed channel, by address.
func TestCheckDeleteSuppression(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		channel heraldtype.Channel
		address string
		field   string
	}{
		{heraldtype.ChannelSMS, "+15550001", ""},
		{heraldtype.ChannelEmail, "a@example.com", ""},
		{heraldtype.ChannelSMS, "", "address"},
		{heraldtype.ChannelPush, "x", "channel"},
		{"", "x", "channel"},
	} {
		err := rules.CheckDeleteSuppression(c.channel, c.address)
		var he *heraldtype.Error
		if c.field == "" && err != nil || c.field != "" && (!errors.As(err, &he) || he.Field != c.field) {
			t.Errorf("CheckDeleteSuppression(%q, %q) = %v, want field %q", c.channel, c.address, err, c.field)
		}
	}
}
