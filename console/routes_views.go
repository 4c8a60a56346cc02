package console

import "github.com/heraldhq/herald/auth"

// viewRoutes registers the notification, why, user and catalogue views,
// each with the scope of the API route it stands for (httpapi's server.go).
func (c *Console) viewRoutes() {
	c.view("GET /console/notifications", auth.ScopeNotificationsRead, c.notifications)
	c.view("GET /console/notifications/{id}", auth.ScopeNotificationsRead, c.notification)
	c.view("GET /console/digests", auth.ScopeNotificationsRead, c.digests)
	c.view("GET /console/digests/{id}", auth.ScopeNotificationsRead, c.digest)
	c.view("GET /console/why", auth.ScopeNotificationsRead, c.why)
	c.view("GET /console/engagement", auth.ScopeNotificationsRead, c.engagement)
	c.view("GET /console/users", auth.ScopeUsersRead, c.users)
	c.view("GET /console/users/{id}", auth.ScopeUsersRead, c.user)
	c.action("POST /console/users/{id}/preferences", auth.ScopePreferencesWrite, c.savePreferences)
	c.catalogRoutes()
}

// catalogRoutes registers the types, rules, reminders, campaigns and
// webhook endpoints.
func (c *Console) catalogRoutes() {
	c.view("GET /console/types", auth.ScopeNotificationsRead, c.types)
	c.view("GET /console/types/{type}", auth.ScopeNotificationsRead, c.notificationType)
	c.action("POST /console/types/{type}", auth.ScopeAdmin, c.saveType)
	c.view("GET /console/types/{type}/templates", auth.ScopeNotificationsRead, c.typeTemplates)
	c.action("POST /console/types/{type}/test-send", auth.ScopeNotificationsWrite, c.testSendTemplates)
	c.ruleRoutes()
	c.reminderRoutes()
	c.campaignRoutes()
	c.webhookRoutes()
}

// ruleRoutes registers the rules' pages and actions. The dry run changes
// nothing and needs only rules:read, as its API route does; it is a POST
// for the pasted event's size, and carries the CSRF token like any form.
func (c *Console) ruleRoutes() {
	c.view("GET /console/rules", auth.ScopeRulesRead, c.rules)
	c.view("GET /console/rules/{name}", auth.ScopeRulesRead, c.rule)
	c.action("POST /console/rules/{name}", auth.ScopeRulesWrite, c.saveRule)
	c.action("POST /console/rules/{name}/dry-run", auth.ScopeRulesRead, c.dryRunRule)
}

// reminderRoutes registers the reminders' list and cancels.
func (c *Console) reminderRoutes() {
	c.view("GET /console/reminders", auth.ScopeRemindersRead, c.reminders)
	c.view("GET /console/reminders/{key}", auth.ScopeRemindersRead, c.reminder)
	c.action("POST /console/reminders/{key}", auth.ScopeRemindersWrite, c.saveReminder)
	c.action("POST /console/reminders/cancel", auth.ScopeRemindersWrite, c.cancelReminders)
	c.action("POST /console/reminders/{key}/cancel", auth.ScopeRemindersWrite, c.cancelReminder)
}

// campaignRoutes registers the campaigns' pages and actions.
func (c *Console) campaignRoutes() {
	c.view("GET /console/campaigns", auth.ScopeCampaignsRead, c.campaigns)
	c.view("GET /console/campaigns/{name}", auth.ScopeCampaignsRead, c.campaign)
	c.action("POST /console/campaigns/{name}", auth.ScopeCampaignsWrite, c.saveCampaign)
	c.action("POST /console/campaigns/{name}/run", auth.ScopeCampaignsWrite, c.runCampaign)
}
