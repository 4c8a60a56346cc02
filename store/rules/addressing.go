package rules

import (
	"slices"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The rules of who a delivery goes to, as SQL over the facts the enqueue
// statements read as they write: the user's devices (push) and the
// user's phone, e-mail address and the suppression list (sms, email).

// PushDeviceSQL is which devices a push notification goes to, as the
// condition on a device row d and a row r (platform, provider) of the
// push routing table (PushRoutes): an ACTIVE device, opted in to push,
// holding a token, whose platform has a provider — r.provider, the
// delivery's. An INVALID, opted-out or unrouted device gets no delivery.
const PushDeviceSQL = `d.status = 'ACTIVE' AND d.push_opt_in = TRUE AND d.token <> '' AND r.platform = d.platform`

// AddressSQL is the address of an sms or email delivery (from the SQL
// expressions of its channel and of the user's phone and e-mail
// address): the phone for sms, the e-mail address for email, as the
// user has them when the trigger is written.
func AddressSQL(channel, phone, email string) string {
	return `CASE ` + channel + ` WHEN 'sms' THEN ` + phone + ` ELSE ` + email + ` END`
}

// SkipSQL is whether an sms or email delivery can be sent (from the SQL
// expressions of its address and of the reason that address is
// suppressed on the delivery's channel, NULL if it is not): ” if it can,
// else the code it is skipped with — store.CodeNoAddress for a user
// without the address, store.CodeSuppressed for a suppressed one. Never
// a silent drop: the skipped delivery is written and counted.
func SkipSQL(address, suppressed string) string {
	return `CASE WHEN ` + address + ` = '' THEN '` + store.CodeNoAddress + `'
	WHEN ` + suppressed + ` IS NOT NULL THEN '` + store.CodeSuppressed + `' ELSE '' END`
}

// AddressedStateSQL is the state an sms or email delivery starts in,
// from its skip code (SkipSQL): pending, or skipped — final at once.
func AddressedStateSQL(skip string) string {
	return `CASE ` + skip + ` WHEN '' THEN 'pending' ELSE 'skipped' END`
}

// SkipErrorSQL is the last error of an sms or email delivery (from its
// skip code, channel and suppression reason): what the operator reads
// on a skipped one, empty on a pending one.
func SkipErrorSQL(skip, channel, suppressed string) string {
	return `CASE ` + skip + ` WHEN '' THEN ''
	WHEN '` + store.CodeNoAddress + `' THEN 'the user has no ' ||
		CASE ` + channel + ` WHEN 'sms' THEN 'phone number' ELSE 'e-mail address' END
	ELSE 'the address is suppressed on ' || ` + channel + ` || ': ' || ` + suppressed + ` END`
}

// FinishedAtSQL is the finished_at of an sms or email delivery (from its
// skip code and the trigger's time, a typed parameter marker): now if it
// was skipped, NULL while it is pending.
func FinishedAtSQL(skip, now string) string {
	return `CASE ` + skip + ` WHEN '' THEN NULL ELSE ` + now + ` END`
}

// CheckSuppressionChannel rejects, as EINVALID on the field channel, a
// channel whose deliveries have no address to suppress (push, in_app);
// "" (every channel) only where all is set (listing).
func CheckSuppressionChannel(channel heraldtype.Channel, all bool) error {
	if slices.Contains(addressed, channel) || channel == "" && all {
		return nil
	}
	return heraldtype.FieldErrorf("channel", "must be sms or email, not %q", channel)
}

// CheckDeleteSuppression validates the arguments of Store.DeleteSuppression:
// an addressed channel and an address.
func CheckDeleteSuppression(channel heraldtype.Channel, address string) error {
	if err := CheckSuppressionChannel(channel, false); err != nil {
		return err
	}
	if address == "" {
		return heraldtype.FieldErrorf("address", "must not be empty")
	}
	return nil
}
