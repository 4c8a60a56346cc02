package heraldclient_test

import (
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/heraldhq/herald/heraldclient"
)

// operations maps every route the server registers to the Client method
// that calls it; leftOut names the routes a program does not call.
var operations = map[string]string{
	"PUT /v1/users/{id}":                          "PutUser",
	"GET /v1/users/{id}":                          "GetUser",
	"POST /v1/users/{id}/devices":                 "RegisterDevice",
	"GET /v1/users/{id}/devices":                  "ListDevices",
	"DELETE /v1/users/{id}/devices/{device_id}":   "DeleteDevice",
	"POST /v1/devices/{device_id}/heartbeat":      "HeartbeatDevice",
	"POST /v1/tokens":                             "RegisterOwnDevice",
	"POST /v1/tokens/heartbeat":                   "HeartbeatOwnDevice",
	"POST /v1/receipts":                           "RecordReceipts",
	"GET /v1/users/{id}/inbox":                    "ListInbox",
	"GET /v1/users/{id}/inbox/stream":             "InboxStream",
	"POST /v1/users/{id}/inbox/read":              "MarkInboxRead",
	"POST /v1/users/{id}/inbox/read-all":          "MarkAllInboxRead",
	"POST /v1/users/{id}/inbox/{item_id}/archive": "ArchiveInboxItem",
	"POST /v1/users/{id}/inbox/seen":              "MarkInboxSeen",
	"POST /v1/users/{id}/inbox/{item_id}/click":   "ClickInboxItem",
	"GET /v1/users/{id}/preferences":              "GetPreferences",
	"PUT /v1/users/{id}/preferences":              "PutPreferences",
	"GET /v1/users/{id}/notifications":            "UserNotifications",
	"GET /v1/users/{id}/explain":                  "Explain",
	"GET /v1/notifications":                       "ListNotifications",
	"GET /v1/engagement":                          "Engagement",
	"GET /v1/types":                               "ListTypes",
	"GET /v1/types/{type}":                        "GetType",
	"PUT /v1/types/{type}":                        "PutType",
	"PUT /v1/types/{type}/templates":              "PutTemplates",
	"GET /v1/types/{type}/templates":              "GetTemplates",
	"GET /v1/types/{type}/templates/versions":     "ListTemplateVersions",
	"POST /v1/types/{type}/preview":               "PreviewTemplates",
	"POST /v1/types/{type}/test-send":             "TestSendTemplates",
	"POST /v1/notifications":                      "Trigger",
	"POST /v1/notifications/cancel":               "Cancel",
	"GET /v1/notifications/{id}":                  "GetNotification",
	"GET /v1/digests":                             "ListDigests",
	"GET /v1/digests/{id}":                        "GetDigest",
	"GET /v1/deliveries":                          "ListDeliveries",
	"GET /v1/deliveries/{id}":                     "GetDelivery",
	"POST /v1/deliveries/{id}/replay":             "ReplayDelivery",
	"POST /v1/deliveries/replay":                  "ReplayDeliveries",
	"PUT /v1/reminders/{key}":                     "PutReminder",
	"GET /v1/reminders/{key}":                     "GetReminder",
	"DELETE /v1/reminders/{key}":                  "CancelReminder",
	"GET /v1/reminders":                           "ListReminders",
	"POST /v1/reminders/cancel":                   "CancelReminders",
	"GET /v1/users/{id}/reminders":                "ListReminders",
	"POST /v1/events":                             "PostEvent",
	"GET /v1/events/dead":                         "ListDeadEvents",
	"GET /v1/events/dead/{id}":                    "GetDeadEvent",
	"POST /v1/events/dead/{id}/replay":            "ReplayDeadEvent",
	"POST /v1/events/dead/replay":                 "ReplayDeadEvents",
	"POST /v1/interests":                          "RecordInterests",
	"GET /v1/users/{id}/interests":                "ListInterests",
	"PUT /v1/rules/{name}":                        "PutRule",
	"GET /v1/rules/{name}":                        "GetRule",
	"DELETE /v1/rules/{name}":                     "DeleteRule",
	"GET /v1/rules":                               "ListRules",
	"POST /v1/rules/{name}/dry-run":               "DryRunRule",
	"GET /v1/rules/{name}/runs":                   "ListRuleRuns",
	"PUT /v1/campaigns/{name}":                    "PutCampaign",
	"GET /v1/campaigns/{name}":                    "GetCampaign",
	"DELETE /v1/campaigns/{name}":                 "DeleteCampaign",
	"GET /v1/campaigns":                           "ListCampaigns",
	"POST /v1/campaigns/{name}/run":               "RunCampaign",
	"GET /v1/campaigns/{name}/runs":               "ListCampaignRuns",
	"POST /v1/webhooks":                           "CreateWebhook",
	"GET /v1/webhooks":                            "ListWebhooks",
	"GET /v1/webhooks/{id}":                       "GetWebhook",
	"PATCH /v1/webhooks/{id}":                     "UpdateWebhook",
	"DELETE /v1/webhooks/{id}":                    "DeleteWebhook",
	"POST /v1/webhooks/{id}/rotate":               "RotateWebhookSecret",
	"GET /v1/webhooks/{id}/messages":              "ListWebhookMessages",
	"POST /v1/webhooks/{id}/replay":               "ReplayWebhookMessages",
	"POST /v1/webhooks/{id}/test":                 "TestWebhook",
	"GET /v1/suppressions":                        "ListSuppressions",
	"DELETE /v1/suppressions/{channel}/{address}": "DeleteSuppression",
	"GET /healthz":                                "Health",
	"GET /readyz":                                 "Ready",
	"GET /v1/webpush/vapid-public-key":            "VAPIDPublicKey",
	"GET /openapi.json":                           "OpenAPI",
	"GET /sdk/integrity":                          "SDKIntegrity",
}

// leftOut are the routes the package doc says it leaves out, and why.
var leftOut = map[string]string{
	"GET /metrics":                     "Prometheus scrapes it",
	"GET /v1/unsubscribe/{token}":      "a mail client follows the link",
	"POST /v1/unsubscribe/{token}":     "a mail client posts the one-click unsubscribe",
	"GET /t/o/{token}":                 "a mail client fetches the open pixel",
	"GET /t/c/{token}":                 "a mail reader follows the tracked link",
	"POST /v1/providers/twilio/status": "Twilio calls it, signed",
	"GET /v1/users/{id}/inbox/ws":      "the same stream as InboxStream, for browsers",
	"GET /openapi.yaml":                "the same document as OpenAPI's JSON, as YAML",
	"GET /sdk/v1/{file}":               "a browser loads the web SDK's files",
	"GET /sdk/example":                 "a page for a person in a browser",
}

// TestEveryRouteHasAMethod reads the routes the server registers and
// fails on one the client neither calls nor leaves out on purpose, and on
// a mapped method the Client lacks.
func TestEveryRouteHasAMethod(t *testing.T) {
	src, err := os.ReadFile("../httpapi/server.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`s\.handle(?:Unbounded|Waiting)?\("([A-Z]+ [^"]+)"`)
	routes := re.FindAllStringSubmatch(string(src), -1)
	if len(routes) < 50 {
		t.Fatalf("found %d routes in httpapi/server.go; the pattern no longer matches its registrations", len(routes))
	}
	typ := reflect.TypeFor[*heraldclient.Client]()
	seen := map[string]bool{}
	for _, m := range routes {
		route := m[1]
		seen[route] = true
		if _, ok := leftOut[route]; ok {
			continue
		}
		name, ok := operations[route]
		if !ok {
			t.Errorf("route %s has no Client method (add one, or say in leftOut and the package doc why not)", route)
			continue
		}
		if _, ok := typ.MethodByName(name); !ok {
			t.Errorf("route %s: the Client has no method %s", route, name)
		}
	}
	for route := range operations {
		if !seen[route] {
			t.Errorf("%s is mapped but the server does not register it", route)
		}
	}
}
