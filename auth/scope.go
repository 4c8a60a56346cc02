// Package auth is Herald's access control: server API keys with scopes,
// stored hashed (keys.go), and the user tokens an app presents for its own
// devices, inbox and preferences (usertoken.go), and the operator
// console's sessions, made by signing in with a key (sessions.go). The
// HTTP API and the console decide with it who may do what; the CLI
// creates and revokes keys with it.
package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is one permission a server API key grants. Each endpoint needs
// one scope (README: Security lists them per endpoint); ScopeAdmin grants
// every scope.
type Scope string

// The scopes. Reading and writing are separate so that, for example, a
// backend that only triggers notifications cannot read users' e-mail
// addresses.
const (
	ScopeUsersRead          Scope = "users:read"
	ScopeUsersWrite         Scope = "users:write"
	ScopeDevicesRead        Scope = "devices:read"
	ScopeDevicesWrite       Scope = "devices:write"
	ScopeNotificationsRead  Scope = "notifications:read"
	ScopeNotificationsWrite Scope = "notifications:write"
	ScopeDeliveriesRead     Scope = "deliveries:read"
	ScopeDeliveriesAdmin    Scope = "deliveries:admin"
	ScopeInboxRead          Scope = "inbox:read"
	ScopeInboxWrite         Scope = "inbox:write"
	ScopePreferencesRead    Scope = "preferences:read"
	ScopePreferencesWrite   Scope = "preferences:write"
	ScopeSuppressionsRead   Scope = "suppressions:read"
	ScopeSuppressionsWrite  Scope = "suppressions:write"
	ScopeMetricsRead        Scope = "metrics:read"
	ScopeRemindersRead      Scope = "reminders:read"
	ScopeRemindersWrite     Scope = "reminders:write"
	ScopeEventsRead         Scope = "events:read"
	ScopeEventsWrite        Scope = "events:write"
	ScopeInterestsRead      Scope = "interests:read"
	ScopeInterestsWrite     Scope = "interests:write"
	ScopeRulesRead          Scope = "rules:read"
	ScopeRulesWrite         Scope = "rules:write"
	// ScopeCampaignsWrite also lets a key make Herald call the HTTP
	// endpoint a campaign's fetch names: grant it as carefully as admin.
	ScopeCampaignsRead  Scope = "campaigns:read"
	ScopeCampaignsWrite Scope = "campaigns:write"
	// ScopeReceiptsWrite lets a server relay its apps' receipts for any
	// user's messages (POST /v1/receipts; a user token reports its own).
	ScopeReceiptsWrite Scope = "receipts:write"
	// ScopeWebhooksWrite registers, changes and replays outbound webhook
	// endpoints, and so decides where Herald sends its events: grant it
	// as carefully as admin.
	ScopeWebhooksRead  Scope = "webhooks:read"
	ScopeWebhooksWrite Scope = "webhooks:write"
	// ScopeConsole is the operator console's read-only scope (issue 34):
	// it grants every `:read` scope (readScopes) and nothing that writes,
	// replays or administers, so an operator who only looks signs in
	// with a key that cannot change anything.
	ScopeConsole Scope = "console"
	ScopeAdmin   Scope = "admin"
)

// AllScopes lists every scope, ScopeConsole and ScopeAdmin last.
func AllScopes() []Scope {
	return []Scope{
		ScopeUsersRead, ScopeUsersWrite, ScopeDevicesRead, ScopeDevicesWrite,
		ScopeNotificationsRead, ScopeNotificationsWrite, ScopeDeliveriesRead, ScopeDeliveriesAdmin,
		ScopeInboxRead, ScopeInboxWrite, ScopePreferencesRead, ScopePreferencesWrite,
		ScopeSuppressionsRead, ScopeSuppressionsWrite, ScopeMetricsRead,
		ScopeRemindersRead, ScopeRemindersWrite, ScopeEventsRead, ScopeEventsWrite, ScopeInterestsRead, ScopeInterestsWrite,
		ScopeRulesRead, ScopeRulesWrite, ScopeCampaignsRead, ScopeCampaignsWrite, ScopeReceiptsWrite,
		ScopeWebhooksRead, ScopeWebhooksWrite, ScopeConsole, ScopeAdmin,
	}
}

// ReadScopes lists the scopes ScopeConsole grants: every scope that only
// reads. A new `:read` scope belongs here too (scope_test.go checks that
// every scope named `…:read` is listed, and no other).
func ReadScopes() []Scope {
	return []Scope{
		ScopeUsersRead, ScopeDevicesRead, ScopeNotificationsRead, ScopeDeliveriesRead, ScopeInboxRead,
		ScopePreferencesRead, ScopeSuppressionsRead, ScopeMetricsRead, ScopeRemindersRead, ScopeEventsRead,
		ScopeInterestsRead, ScopeRulesRead, ScopeCampaignsRead, ScopeWebhooksRead,
	}
}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return slices.Contains(AllScopes(), s) }

// ParseScopes validates scope names, drops duplicates and sorts them. At
// least one is required: a key that may do nothing is a mistake.
func ParseScopes(names []string) ([]Scope, error) {
	var out []Scope
	for _, n := range names {
		for _, part := range strings.Split(n, ",") { // --scope a,b as well as --scope a --scope b
			s := Scope(strings.TrimSpace(part))
			if s == "" {
				continue
			}
			if !s.Valid() {
				return nil, fmt.Errorf("unknown scope %q (known: %s)", s, scopeList())
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("at least one scope is required (known: %s)", scopeList())
	}
	slices.Sort(out)
	return out, nil
}

func scopeList() string {
	names := make([]string, 0, len(AllScopes()))
	for _, s := range AllScopes() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// Grants reports whether a key with scopes may use an endpoint that needs
// want: it holds want itself, or ScopeAdmin (every scope), or
// ScopeConsole and want only reads.
func Grants(scopes []Scope, want Scope) bool {
	if slices.Contains(scopes, want) || slices.Contains(scopes, ScopeAdmin) {
		return true
	}
	return slices.Contains(scopes, ScopeConsole) && slices.Contains(ReadScopes(), want)
}
