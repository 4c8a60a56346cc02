package storetest

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testTemplates: a type's templates are versioned (issue 37 item 6):
// each save is the next version, earlier ones stay readable by number,
// versions list newest first, and concurrent saves each get their own.
func testTemplates(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	_, err := f.s.GetTemplates(f.ctx, "order", 0)
	wantCode(t, err, heraldtype.ENOTFOUND)
	v1 := heraldtype.MessageTemplates{DefaultLocale: "en", SampleData: map[string]string{"name": "Mina"}, Locales: map[string]heraldtype.ChannelTemplates{
		"en": {Push: &heraldtype.PushTemplate{Title: "Hi {{.name}}", Body: "b", Data: map[string]string{"k": "{{.name}}"}}},
		"ko": {SMS: &heraldtype.SMSTemplate{Text: "{{.name}}님"}, Email: &heraldtype.EmailTemplate{Subject: "s", HTML: "<p>{{.name}}</p>"}},
	}}
	v2 := heraldtype.MessageTemplates{DefaultLocale: "ar", SMSMaxSegments: 2, Locales: map[string]heraldtype.ChannelTemplates{
		"ar": {InApp: &heraldtype.InAppTemplate{Title: "مرحبا", Body: "b", ActionURL: "https://x.example/"}},
	}}
	got1, err := f.s.PutTemplates(f.ctx, "order", v1, base())
	if err != nil || got1.Version != 1 {
		t.Fatalf("first save: %+v %v", got1, err)
	}
	got2, err := f.s.PutTemplates(f.ctx, "order", v2, base().Add(time.Minute))
	if err != nil || got2.Version != 2 {
		t.Fatalf("second save: %+v %v", got2, err)
	}
	if other, err := f.s.PutTemplates(f.ctx, "other", v2, base()); err != nil || other.Version != 1 {
		t.Fatalf("another type's first: %+v %v", other, err)
	}
	for version, want := range map[int]heraldtype.TemplateVersion{
		0: {Type: "order", Version: 2, Templates: v2, CreatedAt: base().Add(time.Minute)},
		1: {Type: "order", Version: 1, Templates: v1, CreatedAt: base()},
		2: {Type: "order", Version: 2, Templates: v2, CreatedAt: base().Add(time.Minute)},
	} {
		got, err := f.s.GetTemplates(f.ctx, "order", version)
		if err != nil {
			t.Fatal(err)
		}
		wantTime(t, "created_at", got.CreatedAt, want.CreatedAt)
		got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("version %d:\n%+v\nwant\n%+v", version, got, want)
		}
	}
	_, err = f.s.GetTemplates(f.ctx, "order", 3)
	wantCode(t, err, heraldtype.ENOTFOUND)
	list, err := f.s.ListTemplateVersions(f.ctx, "order", 0, 10)
	if err != nil || len(list) != 2 || list[0].Version != 2 || list[1].Version != 1 {
		t.Fatalf("versions: %+v %v", list, err)
	}
	if list, err = f.s.ListTemplateVersions(f.ctx, "order", 2, 10); err != nil || len(list) != 1 || list[0].Version != 1 {
		t.Fatalf("versions before 2: %+v %v", list, err)
	}
	for _, bad := range [][2]int{{-1, 10}, {0, 0}, {0, 101}} {
		_, err := f.s.ListTemplateVersions(f.ctx, "order", bad[0], bad[1])
		wantCode(t, err, heraldtype.EINVALID)
	}
	_, err = f.s.PutTemplates(f.ctx, "", v1, base())
	wantCode(t, err, heraldtype.EINVALID)

	// A notification keeps the version it is rendered from: on its
	// detail and on each claimed job.
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	n := f.notification("u1")
	n.TemplateVersion = 2
	f.enqueue(params(n, f.notification("u1")))
	if got, err := f.s.GetNotification(f.ctx, n.ID); err != nil || got.TemplateVersion != 2 {
		t.Fatalf("the notification's version: %d %v", got.TemplateVersion, err)
	}
	jobs := f.claim("w", base(), 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %d jobs", len(jobs))
	}
	for _, j := range jobs {
		want := 0
		if j.Notification.ID == n.ID {
			want = 2
		}
		if j.Notification.TemplateVersion != want {
			t.Errorf("job of %s: version %d, want %d", j.Notification.ID, j.Notification.TemplateVersion, want)
		}
	}

	// Concurrent saves of one type each get a version of their own.
	var wg sync.WaitGroup
	versions := make(chan int, 8)
	for range 8 {
		wg.Go(func() {
			v, err := f.s.PutTemplates(f.ctx, "race", v1, base())
			if err != nil {
				t.Error(err)
				return
			}
			versions <- v.Version
		})
	}
	wg.Wait()
	close(versions)
	seen := map[int]bool{}
	for v := range versions {
		if seen[v] {
			t.Errorf("version %d given twice", v)
		}
		seen[v] = true
	}
}
