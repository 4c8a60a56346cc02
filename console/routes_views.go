package console

import "github.com/heraldhq/herald/auth"

// viewRoutes registers the notification, why, user and catalogue views,
// each with the scope of the API route it stands for (httpapi's server.go).
func (c *Console) viewRoutes() {
	c.view("GET /console/notifications", auth.ScopeNotificationsRead, c.notifications)
	c.view("GET /console/notifications/{id}", auth.ScopeNotificationsRead, c.notification)
	c.view("GET /console/why", auth.ScopeNotificationsRead, c.why)
	c.view("GET /console/users", auth.ScopeUsersRead, c.users)
	c.view("GET /console/users/{id}", auth.ScopeUsersRead, c.user)
	c.action("POST /console/users/{id}/preferences", auth.ScopePreferencesWrite, c.savePreferences)
}
