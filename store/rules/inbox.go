package rules

import "github.com/heraldhq/herald/store"

// The in-app rule (S4.5): an in_app notification is written to the
// user's inbox in the trigger's own transaction, and the item is its
// delivery, sent at once: provider store.InboxProvider, attempt 1 with a
// sent attempt row, provider message id = the item's id, finished now.
// The inbox is the record the user is guaranteed to see.

// InboxItemColumns are the columns of inbox_items the enqueue writes;
// InboxItemSQL gives their values.
const InboxItemColumns = `user_id, notification_id, type, title, body, data, created_at`

// InboxItemSQL is the values of InboxItemColumns for the in-app
// notification row x (a notifications row) written at now (a parameter
// marker): the notification's user and content.
func InboxItemSQL(now string) string {
	return `x.user_id, x.id, x.type, x.title, x.body, x.data, ` + now
}

// InboxDeliveryColumns are the columns of deliveries an in-app delivery
// sets; InboxDeliverySQL gives their values.
const InboxDeliveryColumns = `notification_id, user_id, type, channel, provider, state, guarantee, attempt,
	max_attempts, run_at, provider_message_id, created_at, updated_at, finished_at`

// InboxDeliverySQL is the values of InboxDeliveryColumns for the inbox
// item row i of the notification row x, from the parameter markers of
// the trigger's max attempts and time: already sent.
func InboxDeliverySQL(maxAttempts, now string) string {
	return `i.notification_id, i.user_id, i.type, 'in_app', '` + store.InboxProvider + `', 'sent', x.guarantee, 1, ` +
		maxAttempts + `, ` + now + `, CAST(i.id AS TEXT), ` + now + `, ` + now + `, ` + now
}
