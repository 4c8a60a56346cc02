package heraldclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func TestUsersAndDevices(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	u, err := c.PutUser(ctx, "user:1", heraldclient.UserInput{Timezone: "Asia/Seoul", Locale: "ko-KR", Email: "u1@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "user:1" || u.Timezone != "Asia/Seoul" || u.CreatedAt.IsZero() {
		t.Errorf("PutUser: %+v", u)
	}
	got, err := c.GetUser(ctx, "user:1")
	if err != nil || got.Email != "u1@example.com" {
		t.Errorf("GetUser: %+v, %v", got, err)
	}
	off := false
	d, err := c.RegisterDevice(ctx, "user:1", heraldclient.DeviceInput{DeviceID: "phone-1", Token: "tok-1", Platform: heraldtype.PlatformAndroid, PushOptIn: &off})
	if err != nil || d.ID != "phone-1" || d.UserID != "user:1" || d.PushOptIn {
		t.Fatalf("RegisterDevice: %+v, %v", d, err)
	}
	if err := c.HeartbeatDevice(ctx, "phone-1"); err != nil {
		t.Errorf("HeartbeatDevice: %v", err)
	}
	ds, err := c.ListDevices(ctx, "user:1")
	if err != nil || len(ds) != 1 || ds[0].Token != "tok-1" {
		t.Errorf("ListDevices: %+v, %v", ds, err)
	}
	if err := c.DeleteDevice(ctx, "user:1", "phone-1"); err != nil {
		t.Errorf("DeleteDevice: %v", err)
	}
	if ds, err := c.ListDevices(ctx, "user:1"); err != nil || len(ds) != 0 || ds == nil {
		t.Errorf("ListDevices after delete: %#v, %v", ds, err)
	}
	if err := c.DeleteDevice(ctx, "user:1", "phone-1"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("DeleteDevice again: %v", err)
	}
}

func TestOwnDevicesWithAUserToken(t *testing.T) {
	s := newServer(t, serverOptions{})
	ctx := context.Background()
	if _, err := s.client(t).PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	app := s.client(t, heraldclient.WithUserToken(userToken(t, "u1")))
	d, err := app.RegisterOwnDevice(ctx, heraldclient.DeviceInput{DeviceID: "d1", Token: "t1", Platform: heraldtype.PlatformIOS})
	if err != nil || d.UserID != "u1" || !d.PushOptIn {
		t.Fatalf("RegisterOwnDevice: %+v, %v", d, err)
	}
	if err := app.HeartbeatOwnDevice(ctx, heraldclient.OwnHeartbeat{DeviceID: "d1"}); err != nil {
		t.Errorf("HeartbeatOwnDevice: %v", err)
	}
	if err := app.HeartbeatOwnDevice(ctx, heraldclient.OwnHeartbeat{DeviceID: "other"}); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("HeartbeatOwnDevice of another device: %v", err)
	}
	// A user token reads its own user's things, not another's.
	if _, err := app.ListDevices(ctx, "u1"); err != nil {
		t.Errorf("ListDevices of its own user: %v", err)
	}
	if _, err := app.ListDevices(ctx, "u2"); !heraldclient.IsCode(err, heraldclient.CodePermissionDenied) {
		t.Errorf("ListDevices of another user: %v", err)
	}
	if _, err := app.UserNotifications(ctx, "u1", heraldtype.HistoryFilter{}); err != nil {
		t.Errorf("UserNotifications of its own user: %v", err)
	}
}

func TestTypes(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	no := false
	typ, err := c.PutType(ctx, "security_alert", heraldclient.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp},
		Priority: heraldtype.PriorityHigh, DedupeWindow: "10m", QuietHours: &no, Critical: true, Guarantee: heraldtype.AtMostOnce})
	if err != nil {
		t.Fatal(err)
	}
	if typ.Name != "security_alert" || typ.Source != heraldclient.TypeSourceAPI || typ.QuietHours || !typ.Critical || typ.DedupeWindow == "" {
		t.Errorf("PutType: %+v", typ)
	}
	got, err := c.GetType(ctx, "security_alert")
	if err != nil || got.Priority != heraldtype.PriorityHigh || len(got.Channels) != 2 {
		t.Errorf("GetType: %+v, %v", got, err)
	}
	def, err := c.GetType(ctx, "undeclared")
	if err != nil || def.Source != heraldclient.TypeSourceDefault {
		t.Errorf("GetType of an undeclared type: %+v, %v", def, err)
	}
	list, err := c.ListTypes(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "security_alert" {
		t.Errorf("ListTypes: %+v, %v", list, err)
	}
	_, err = c.PutType(ctx, "bad", heraldclient.TypeConfig{DedupeWindow: "soon"})
	var herr *heraldclient.Error
	if !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("PutType with a bad window: %v", err)
	} else if _ = asError(err, &herr); herr.Field != "dedupe_window" {
		t.Errorf("field %q, want dedupe_window", herr.Field)
	}

	// A digest type (issue 36 item 1): declared, triggered, read back.
	dt, err := c.PutType(ctx, "comment", heraldclient.TypeConfig{Digest: &heraldclient.DigestConfig{Window: "10m",
		Key: "{{.post_id}}", Title: "{{.Count}} new comments"}})
	if err != nil || dt.Digest == nil || dt.Digest.Window != "10m0s" || dt.Digest.First != "collect" || dt.Digest.MaxItems < 1 {
		t.Fatalf("PutType with a digest: %+v, %v", dt.Digest, err)
	}
	if _, err := c.PutType(ctx, "bad", heraldclient.TypeConfig{Digest: &heraldclient.DigestConfig{Title: "x"}}); !asError(err, &herr) ||
		herr.Field != "digest.window" {
		t.Errorf("PutType with a digest without a window: %v", err)
	}
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "comment", Title: "Ana commented",
		Data: map[string]string{"post_id": "p1"}})
	if err != nil || res.Notifications[0].Digest == "" {
		t.Fatalf("Trigger of a digest type: %+v, %v", res, err)
	}
	d, err := c.GetDigest(ctx, res.Notifications[0].Digest)
	if err != nil || d.State != "open" || d.Key != "p1" || len(d.Entries) != 1 || d.Entries[0].Title != "Ana commented" {
		t.Errorf("GetDigest: %+v, %v", d, err)
	}
	if _, err := c.GetDigest(ctx, "nope"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetDigest(unknown): %v", err)
	}
}

func TestPreferences(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{Timezone: "Europe/Berlin"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.PutPreferences(ctx, "u1", heraldtype.Preferences{
		Types:            map[string]heraldtype.TypePreference{"marketing": {Disabled: true}},
		OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelSMS},
		QuietHours:       &heraldtype.QuietHours{Start: "22:00", End: "07:00"},
		DailyCap:         5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.UserID != "u1" || !p.Types["marketing"].Disabled || p.DailyCap != 5 || p.Timezone != "Europe/Berlin" {
		t.Errorf("PutPreferences: %+v", p)
	}
	got, err := c.GetPreferences(ctx, "u1")
	if err != nil || got.QuietHours == nil || got.QuietHours.Start != "22:00" {
		t.Errorf("GetPreferences: %+v, %v", got, err)
	}
	_, err = c.PutPreferences(ctx, "u1", heraldtype.Preferences{QuietHours: &heraldtype.QuietHours{Start: "25:00", End: "07:00"}})
	if !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("bad quiet hours: %v", err)
	}
}

func TestNotificationsAndTheirStatus(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "u1", heraldclient.DeviceInput{DeviceID: "d1", Token: "t1", Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "order_shipped", Title: "Shipped", Body: "Your order is on its way",
		Data: map[string]string{"order": "42"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID == "" || res.Replayed || len(res.Notifications) != 1 || res.Notifications[0].Deliveries != 1 {
		t.Fatalf("Trigger: %+v", res)
	}
	// The workers deliver it to the fake provider.
	var n heraldclient.NotificationStatus
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err = c.GetNotification(ctx, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n.Status == heraldtype.HistorySent || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n.Status != heraldtype.HistorySent || n.ID != res.ID || n.UserID != "u1" || len(n.Deliveries) != 1 ||
		n.Deliveries[0].State != heraldtype.StateSent || n.ChannelStatus[heraldtype.ChannelPush] != heraldtype.HistorySent {
		t.Errorf("GetNotification: %+v", n)
	}
	page, err := c.UserNotifications(ctx, "u1", heraldtype.HistoryFilter{Status: heraldtype.HistorySent})
	if err != nil || len(page.Notifications) != 1 || page.Notifications[0].NotificationID != res.ID {
		t.Errorf("UserNotifications: %+v, %v", page, err)
	}
	if _, err := c.GetNotification(ctx, "nope"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetNotification of a missing one: %v", err)
	}
	if _, err := c.Trigger(ctx, heraldclient.TriggerRequest{Type: "order_shipped"}); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("a trigger without a recipient: %v", err)
	}
}

// With a status filter a page examines at most the server's history_scan
// notifications (issue 34 item 3): it may be empty and still carry a
// next_cursor, and the iterator goes on through it to every match.
func TestNotificationsWalkPastEmptyPages(t *testing.T) {
	s := newServer(t, serverOptions{historyScan: 2})
	c := s.client(t)
	ctx := context.Background()
	trigger := func(user string, ch heraldtype.Channel) string {
		t.Helper()
		if _, err := c.PutUser(ctx, user, heraldclient.UserInput{}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserIDs: []string{user}, Type: "news", Title: "Hello",
			Channels: []heraldtype.Channel{ch}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		return res.Notifications[0].ID
	}
	var failed []string
	for i := range 3 { // no device: the push fails at once
		failed = append([]string{trigger(fmt.Sprintf("nodev%d", i), heraldtype.ChannelPush)}, failed...)
	}
	for i := range 5 {
		trigger(fmt.Sprintf("inbox%d", i), heraldtype.ChannelInApp)
	}
	f := heraldtype.HistoryFilter{Status: heraldtype.HistoryFailed, Limit: 10}
	page, err := c.ListNotifications(ctx, f)
	if err != nil || len(page.Notifications) != 0 || page.NextCursor == "" {
		t.Fatalf("first FAILED page = %+v, %v; want no entry and a next cursor", page, err)
	}
	var walked []string
	for e, err := range c.Notifications(ctx, f) {
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, e.NotificationID)
	}
	if !slices.Equal(walked, failed) {
		t.Errorf("walked %v, want %v", walked, failed)
	}
}

func TestIteratorsWalkEveryPage(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	const users = 7
	ids := make([]string, users)
	for i := range ids {
		ids[i] = fmt.Sprintf("u%d", i)
		if _, err := c.PutUser(ctx, ids[i], heraldclient.UserInput{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserIDs: ids, Type: "news", Title: "Hello",
		Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil || len(res.Notifications) != users {
		t.Fatalf("Trigger: %+v, %v", res, err)
	}
	// Pages of 2: four requests for seven notifications.
	seen := map[string]bool{}
	for e, err := range c.Notifications(ctx, heraldtype.HistoryFilter{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[e.NotificationID] {
			t.Errorf("%s twice", e.NotificationID)
		}
		seen[e.NotificationID] = true
	}
	if len(seen) != users {
		t.Errorf("walked %d notifications, want %d", len(seen), users)
	}
	n := 0
	for d, err := range c.Deliveries(ctx, heraldtype.DeliveryFilter{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Channel != heraldtype.ChannelInApp {
			t.Errorf("delivery %+v", d)
		}
		n++
	}
	if n != users {
		t.Errorf("walked %d deliveries, want %d", n, users)
	}
	// Breaking out stops the walk.
	n = 0
	for _, err := range c.Notifications(ctx, heraldtype.HistoryFilter{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("break: %d", n)
	}
	// An error ends the walk with the error.
	var errs int
	for _, err := range c.Notifications(ctx, heraldtype.HistoryFilter{Status: "NOPE"}) {
		if err == nil || !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
			t.Errorf("walk of a bad filter yielded %v", err)
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("%d errors yielded, want 1", errs)
	}
}

func TestHealthAndReady(t *testing.T) {
	s := newServer(t, serverOptions{})
	anon, err := heraldclient.New(s.URL) // the probes need no credential
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := anon.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
	if err := anon.Ready(ctx); err != nil {
		t.Errorf("Ready: %v", err)
	}
	if _, err := anon.VAPIDPublicKey(ctx); err != nil && !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("VAPIDPublicKey without Web Push: %v", err)
	}
	sdk, err := anon.SDKIntegrity(ctx)
	if err != nil || sdk.Version != "v1" || len(sdk.Files) == 0 || !strings.HasPrefix(sdk.Files[0].Integrity, "sha384-") {
		t.Errorf("SDKIntegrity: %+v, %v", sdk, err)
	}
}

func TestDoAndOpenAPI(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	var u heraldtype.User
	res, err := c.Do(ctx, heraldclient.Request{Method: "PUT", Path: "/v1/users/u1", Body: json.RawMessage(`{"timezone":"Asia/Tokyo"}`)}, &u)
	if err != nil || res.StatusCode != 200 || u.Timezone != "Asia/Tokyo" || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("Do: %+v %+v, %v", res, u, err)
	}
	// The server's strict decoder names a field the typed methods cannot send.
	_, err = c.Do(ctx, heraldclient.Request{Method: "PUT", Path: "/v1/users/u1", Body: json.RawMessage(`{"colour":"red"}`)}, nil)
	var herr *heraldclient.Error
	if !asError(err, &herr) || herr.Field != "colour" {
		t.Errorf("Do with an unknown field: %v", err)
	}
	doc, err := c.OpenAPI(ctx)
	if err != nil || !strings.Contains(string(doc), `"openapi"`) {
		t.Errorf("OpenAPI: %.100s, %v", doc, err)
	}
}

// A Herald behind a proxy under a path prefix.
func TestBaseURLWithAPathPrefix(t *testing.T) {
	s := newServer(t, serverOptions{front: func(h http.Handler) http.Handler {
		return http.StripPrefix("/herald", h)
	}})
	c, err := heraldclient.New(s.URL+"/herald/", heraldclient.WithAPIKey(s.adminKey))
	if err != nil {
		t.Fatal(err)
	}
	if u, err := c.PutUser(context.Background(), "u:1", heraldclient.UserInput{}); err != nil || u.ID != "u:1" {
		t.Errorf("PutUser through the prefix: %+v, %v", u, err)
	}
}
