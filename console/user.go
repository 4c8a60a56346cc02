package console

import (
	"html"
	"net/http"
	"slices"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/websdk"
)

// The user views: a search by id, and one user's page — devices,
// preferences (editable), today's cap usage, upcoming reminders, inbox
// and last notifications. Each section reads with the scope its API
// route needs; a session without it sees which scope is missing.

// userSectionLimit is how many rows each of the user page's lists shows;
// each links to the whole list.
const userSectionLimit = 20

// prefChannels are the channels a user may opt out of, in the form's
// order.
var prefChannels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp}

// prefsForm is the preferences form's values: as stored, or as posted
// when the API refused them.
type prefsForm struct {
	DailyCap                        string
	QuietStart, QuietEnd            string
	OptedOut                        map[heraldtype.Channel]bool
	Types                           []typePrefRow
	NewType, NewChannels, NewDigest string
	NewOff                          bool
	Timezone                        string
}

// typePrefRow is the user's choice for one type.
type typePrefRow struct {
	Name     string
	Off      bool
	Channels string
	// Digest is the user's digest schedule of the type as the form writes
	// it ("daily 18:00", "weekly monday 09:00"); empty for none.
	Digest string
}

// userData is the user page's.
type userData struct {
	User     heraldtype.User
	Channels []heraldtype.Channel
	// Each section's Note says why it is empty when the session may not
	// read it.
	Devices       []heraldtype.Device
	DevicesNote   string
	Prefs         prefsForm
	PrefsErr      *formResult
	PrefsNote     string
	Saved         bool
	Cap           *herald.CapUsage
	CapNote       string
	Reminders     []herald.Reminder
	RemindersMore string
	RemindersNote string
	Inbox         *herald.InboxPage
	InboxNote     string
	// Embed is the HTML that shows the user's inbox on a web page with
	// the web SDK (issue 38), pinned with its integrity hash.
	Embed      string
	Recent     []herald.HistoryEntry
	RecentMore string
	RecentNote string
}

// users is the search: ?id= opens the user's page.
func (c *Console) users(w http.ResponseWriter, r *http.Request, s Session) error {
	if id := query(r, "id"); id != "" {
		seeOther(w, r, pathLink("/console/users/", id))
		return nil
	}
	c.render(w, r, http.StatusOK, "users", page{Title: "Users", Session: s})
	return nil
}

// user shows one user.
func (c *Console) user(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.userPage(r, s, r.PathValue("id"))
	if err != nil {
		return err
	}
	d.Saved = r.URL.Query().Get("saved") == "preferences"
	if s.Can(auth.ScopePreferencesRead) {
		p, err := c.client.GetPreferences(r.Context(), d.User.ID)
		if err != nil {
			return err
		}
		d.Prefs = formOfPrefs(p)
		// Every declared type gets a row, so turning one off is a click.
		if s.Can(auth.ScopeNotificationsRead) {
			ts, err := c.client.ListTypes(r.Context())
			if err != nil {
				return err
			}
			d.Prefs.addTypes(ts)
		}
	}
	c.renderUser(w, r, http.StatusOK, s, d)
	return nil
}

func (c *Console) renderUser(w http.ResponseWriter, r *http.Request, status int, s Session, d userData) {
	c.render(w, r, status, "user", page{Title: "User " + d.User.ID, Path: "/console/users", Session: s, Data: d})
}

// userPage reads every section but the preferences form's values.
func (c *Console) userPage(r *http.Request, s Session, id string) (userData, error) {
	ctx := r.Context()
	u, err := c.client.GetUser(ctx, id)
	if err != nil {
		return userData{}, err
	}
	d := userData{User: u, Channels: prefChannels, Embed: embedSnippet(r, id)}
	if s.Can(auth.ScopeDevicesRead) {
		if d.Devices, err = c.client.ListDevices(ctx, id); err != nil {
			return d, err
		}
	} else {
		d.DevicesNote = needs(auth.ScopeDevicesRead)
	}
	if !s.Can(auth.ScopePreferencesRead) {
		d.PrefsNote = needs(auth.ScopePreferencesRead)
	}
	if s.Can(auth.ScopeNotificationsRead) {
		cp, err := c.client.DailyCapUsage(ctx, id)
		if err != nil {
			return d, err
		}
		d.Cap = &cp
		h, err := c.client.ListHistory(ctx, herald.HistoryFilter{UserID: id, Limit: userSectionLimit})
		if err != nil {
			return d, err
		}
		d.Recent = h.Notifications
		if h.NextCursor != "" {
			d.RecentMore = "/console/notifications?user=" + queryEscape(id)
		}
	} else {
		d.CapNote, d.RecentNote = needs(auth.ScopeNotificationsRead), needs(auth.ScopeNotificationsRead)
	}
	if s.Can(auth.ScopeRemindersRead) {
		p, err := c.client.ListReminders(ctx, herald.ReminderFilter{UserID: id, State: heraldtype.ReminderActive, Limit: userSectionLimit})
		if err != nil {
			return d, err
		}
		// The store pages by key; the page reads best soonest first.
		d.Reminders = p.Reminders
		slices.SortStableFunc(d.Reminders, func(a, b herald.Reminder) int { return a.NextAt.Compare(b.NextAt) })
		if p.NextCursor != "" {
			d.RemindersMore = "/console/reminders?user=" + queryEscape(id) + "&state=active"
		}
	} else {
		d.RemindersNote = needs(auth.ScopeRemindersRead)
	}
	if s.Can(auth.ScopeInboxRead) {
		p, err := c.client.ListInbox(ctx, id, herald.InboxFilter{Limit: userSectionLimit})
		if err != nil {
			return d, err
		}
		d.Inbox = &p
	} else {
		d.InboxNote = needs(auth.ScopeInboxRead)
	}
	return d, nil
}

// needs is a section's note for a session without scope.
func needs(scope auth.Scope) string {
	return "Your API key does not have the " + string(scope) + " scope this needs."
}

// savePreferences replaces the user's preferences with the form's
// (PUT /v1/users/{id}/preferences): back to the page on success, the
// page with the API's message beside the field otherwise.
func (c *Console) savePreferences(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	form := prefsFormOf(r)
	p, err := prefsOfForm(form)
	if err == nil {
		_, err = c.client.PutPreferences(r.Context(), id, p)
	}
	if err == nil {
		seeOther(w, r, pathLink("/console/users/", id)+"?saved=preferences#preferences")
		return nil
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	for field, msg := range fr.Fields {
		// A type's field (types.<type>.digest.at) is shown under the table.
		if strings.HasPrefix(field, "types.") {
			fr.Fields["types"] = field + ": " + msg
		}
	}
	d, err := c.userPage(r, s, id)
	if err != nil {
		return err
	}
	d.Prefs, d.PrefsErr = form, &fr
	c.renderUser(w, r, refusedStatus(fr), s, d)
	return nil
}

// formOfPrefs fills the form from stored preferences.
func formOfPrefs(p herald.Preferences) prefsForm {
	f := prefsForm{OptedOut: map[heraldtype.Channel]bool{}, Timezone: p.Timezone}
	if p.DailyCap > 0 {
		f.DailyCap = itoa(p.DailyCap)
	}
	if p.QuietHours != nil {
		f.QuietStart, f.QuietEnd = p.QuietHours.Start, p.QuietHours.End
	}
	for _, ch := range p.OptedOutChannels {
		f.OptedOut[ch] = true
	}
	for name, tp := range p.Types {
		f.Types = append(f.Types, typePrefRow{Name: name, Off: tp.Disabled, Channels: channelList(tp.Channels),
			Digest: digestScheduleText(tp.Digest)})
	}
	for i := range f.Types {
		if f.Types[i].Channels == "no channel" {
			f.Types[i].Channels = ""
		}
	}
	slices.SortFunc(f.Types, func(a, b typePrefRow) int { return strings.Compare(a.Name, b.Name) })
	return f
}

// addTypes adds a row, on, for each type the preferences do not list.
func (f *prefsForm) addTypes(ts []herald.NotificationType) {
	have := map[string]bool{}
	for _, row := range f.Types {
		have[row.Name] = true
	}
	for _, t := range ts {
		if !have[t.Name] {
			f.Types = append(f.Types, typePrefRow{Name: t.Name})
		}
	}
	slices.SortFunc(f.Types, func(a, b typePrefRow) int { return strings.Compare(a.Name, b.Name) })
}

// prefsFormOf reads the posted form.
func prefsFormOf(r *http.Request) prefsForm {
	f := prefsForm{DailyCap: postValue(r, "daily_cap"), QuietStart: postValue(r, "quiet_start"), QuietEnd: postValue(r, "quiet_end"),
		OptedOut: map[heraldtype.Channel]bool{}, NewType: postValue(r, "new_type"), NewChannels: postValue(r, "new_channels"),
		NewOff: r.PostForm.Get("new_off") != "", NewDigest: postValue(r, "new_digest")}
	for _, ch := range r.PostForm["opted_out"] {
		f.OptedOut[heraldtype.Channel(ch)] = true
	}
	for _, name := range r.PostForm["type"] {
		f.Types = append(f.Types, typePrefRow{Name: name, Off: r.PostForm.Get("off."+name) != "", Channels: postValue(r, "channels."+name),
			Digest: postValue(r, "digest."+name)})
	}
	return f
}

// prefsOfForm builds the preferences the form asks for; the API
// validates them.
func prefsOfForm(f prefsForm) (herald.Preferences, error) {
	var p herald.Preferences
	n, err := parseInt("daily_cap", f.DailyCap)
	if err != nil {
		return p, err
	}
	p.DailyCap = n
	if f.QuietStart != "" || f.QuietEnd != "" {
		p.QuietHours = &herald.QuietHours{Start: f.QuietStart, End: f.QuietEnd}
	}
	for _, ch := range prefChannels {
		if f.OptedOut[ch] {
			p.OptedOutChannels = append(p.OptedOutChannels, ch)
		}
	}
	for ch := range f.OptedOut {
		if !slices.Contains(prefChannels, ch) {
			p.OptedOutChannels = append(p.OptedOutChannels, ch)
		}
	}
	rows := f.Types
	if f.NewType != "" {
		rows = append(rows, typePrefRow{Name: f.NewType, Off: f.NewOff, Channels: f.NewChannels, Digest: f.NewDigest})
	}
	for _, row := range rows {
		tp := herald.TypePreference{Disabled: row.Off}
		for _, ch := range splitList(row.Channels) {
			tp.Channels = append(tp.Channels, heraldtype.Channel(ch))
		}
		if tp.Digest, err = parseDigestSchedule(row.Name, row.Digest); err != nil {
			return p, err
		}
		if !tp.Disabled && len(tp.Channels) == 0 && tp.Digest == nil {
			continue // on, on every channel: the default needs no entry
		}
		if p.Types == nil {
			p.Types = map[string]herald.TypePreference{}
		}
		p.Types[row.Name] = tp
	}
	return p, nil
}

// digestScheduleText is a user's digest schedule as the preferences form
// writes it: "daily 18:00" or "weekly monday 09:00"; "" for none.
func digestScheduleText(d *heraldtype.DigestSchedule) string {
	switch {
	case d == nil:
		return ""
	case d.Every == heraldtype.DigestEveryWeek:
		return "weekly " + d.On + " " + d.At
	}
	return "daily " + d.At
}

// parseDigestSchedule reads a type's digest field of the preferences form
// (digestScheduleText's forms); the API checks the time and the day.
func parseDigestSchedule(typ, v string) (*heraldtype.DigestSchedule, error) {
	f := strings.Fields(strings.ToLower(v))
	switch {
	case len(f) == 0:
		return nil, nil
	case len(f) == 2 && f[0] == "daily":
		return &heraldtype.DigestSchedule{Every: heraldtype.DigestEveryDay, At: f[1]}, nil
	case len(f) == 3 && f[0] == "weekly":
		return &heraldtype.DigestSchedule{Every: heraldtype.DigestEveryWeek, On: f[1], At: f[2]}, nil
	}
	return nil, fieldError("types", "%s: digest %q: write daily HH:MM or weekly DAY HH:MM (e.g. weekly monday 09:00)", typ, v)
}

// embedSnippet is the HTML a web page needs to show user's inbox: the web
// SDK's pinned script with its integrity hash and the element, Herald's
// address being the one this console was opened at.
func embedSnippet(r *http.Request, user string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	server := scheme + "://" + r.Host
	js := websdk.Files()[0]
	return `<script type="module" src="` + server + js.Path + `"
        integrity="` + js.Integrity + `" crossorigin="anonymous"></script>
<herald-inbox server="` + server + `" user="` + html.EscapeString(user) + `"></herald-inbox>`
}
