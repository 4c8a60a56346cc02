package console

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The reminders: the list with its filters, and cancelling one
// (DELETE /v1/reminders/{key}) or every one the filter's user and type
// select (POST /v1/reminders/cancel), both reminders:write.

// remindersData is the reminders list's.
type remindersData struct {
	User, Type, State, DueBefore string
	Reminders                    []herald.Reminder
	Next                         string
	Err                          *formResult
	// Cancelled is how many the last cancel stopped, -1 when none ran.
	Cancelled int
	Back      string
}

func (c *Console) reminders(w http.ResponseWriter, r *http.Request, s Session) error {
	d := remindersData{User: query(r, "user"), Type: query(r, "type"), State: query(r, "state"), DueBefore: query(r, "due_before"), Cancelled: -1}
	if v := query(r, "cancelled"); v != "" {
		d.Cancelled, _ = parseInt("cancelled", v)
	}
	f := herald.ReminderFilter{UserID: d.User, Type: d.Type, State: heraldtype.ReminderState(d.State), Cursor: query(r, "cursor"), Limit: listLimit}
	var err error
	if d.State != "" && f.State != heraldtype.ReminderActive && f.State != heraldtype.ReminderStopped {
		err = fieldError("state", "%q is not active or stopped", d.State)
	}
	if err == nil {
		f.DueBefore, err = parseTime("due_before", d.DueBefore)
	}
	if err == nil {
		var p herald.ReminderPage
		if p, err = c.client.ListReminders(r.Context(), f); err == nil {
			d.Reminders, d.Next = p.Reminders, nextLink(r, p.NextCursor)
		}
	}
	var status int
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	q := r.URL.Query()
	q.Del("cancelled")
	d.Back = r.URL.Path + "?" + q.Encode()
	c.render(w, r, status, "reminders", page{Title: "Reminders", Session: s, Data: d})
	return nil
}

// cancelReminder stops one reminder, and goes back to the list it was
// cancelled from.
func (c *Console) cancelReminder(w http.ResponseWriter, r *http.Request, s Session) error {
	if err := c.client.CancelReminder(r.Context(), r.PathValue("key")); err != nil {
		return err
	}
	seeOther(w, r, backTo(r, "/console/reminders")+"&cancelled=1")
	return nil
}

// cancelReminders stops every active reminder of the filter's user and
// type; one of them is required, so a click never cancels them all.
func (c *Console) cancelReminders(w http.ResponseWriter, r *http.Request, s Session) error {
	sel := herald.ReminderSelector{UserID: postValue(r, "user"), Type: postValue(r, "type")}
	if sel.UserID == "" && sel.Type == "" {
		return fieldError("user", "filter by a user or a type before cancelling in bulk")
	}
	n, err := c.client.CancelReminders(r.Context(), sel)
	if err != nil {
		return err
	}
	seeOther(w, r, backTo(r, "/console/reminders")+"&cancelled="+itoa(n))
	return nil
}

// backTo is the posted list to go back to — a path of the list's own,
// never another page — with a query string to add to.
func backTo(r *http.Request, list string) string {
	back := r.PostForm.Get("back")
	if len(back) <= len(list) || back[:len(list)] != list || back[len(list)] != '?' {
		return list + "?"
	}
	return back
}

// reminderData is one reminder's page.
type reminderData struct {
	R   herald.Reminder
	Doc string
}

// reminder shows one reminder: its schedule, stop conditions, state and
// the last notification it sent.
func (c *Console) reminder(w http.ResponseWriter, r *http.Request, s Session) error {
	rm, err := c.client.GetReminder(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	doc, _ := json.MarshalIndent(struct {
		Schedule heraldtype.Schedule     `json:"schedule"`
		Stop     heraldtype.ReminderStop `json:"stop,omitzero"`
	}{rm.Schedule, rm.Stop}, "", "  ")
	c.render(w, r, http.StatusOK, "reminder", page{Title: "Reminder " + rm.Key, Path: "/console/reminders", Session: s, Data: reminderData{R: rm, Doc: string(doc)}})
	return nil
}
