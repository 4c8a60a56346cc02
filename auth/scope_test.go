package auth_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/auth"
)

// TestConsoleScopeReadsOnly: the console scope grants every scope that
// only reads and none that writes, replays or administers (issue 34
// item 1), and ReadScopes names exactly the `…:read` scopes, so a read
// scope added later cannot be forgotten.
func TestConsoleScopeReadsOnly(t *testing.T) {
	console := []auth.Scope{auth.ScopeConsole}
	reads := map[auth.Scope]bool{}
	for _, s := range auth.ReadScopes() {
		reads[s] = true
	}
	for _, s := range auth.AllScopes() {
		isRead := strings.HasSuffix(string(s), ":read")
		if isRead != reads[s] {
			t.Errorf("scope %s: named as a read scope %v, listed in ReadScopes %v", s, isRead, reads[s])
		}
		want := isRead || s == auth.ScopeConsole
		if got := auth.Grants(console, s); got != want {
			t.Errorf("Grants([console], %s) = %v, want %v", s, got, want)
		}
	}
	if !auth.Grants([]auth.Scope{auth.ScopeAdmin}, auth.ScopeConsole) {
		t.Error("admin must grant console")
	}
	if auth.Grants([]auth.Scope{auth.ScopeDeliveriesRead}, auth.ScopeConsole) {
		t.Error("a read scope must not grant console")
	}
	if got, err := auth.ParseScopes([]string{"console"}); err != nil || len(got) != 1 || got[0] != auth.ScopeConsole {
		t.Errorf("ParseScopes(console) = %v, %v", got, err)
	}
}
