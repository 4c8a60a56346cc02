package console

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The reminders: the list with its filters, one reminder edited as a JSON
// document (PUT /v1/reminders/{key}), and cancelling one
// (DELETE /v1/reminders/{key}) or every one the filter's user and type
// select (POST /v1/reminders/cancel), all three reminders:write.

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
	R herald.Reminder
	// Doc is the reminder as the textarea shows it: what a PUT takes.
	Doc   string
	Err   *formResult
	Saved bool
}

// reminder shows one reminder: its message, schedule, stop conditions,
// state and the last notification it sent, and the form that edits it.
func (c *Console) reminder(w http.ResponseWriter, r *http.Request, s Session) error {
	rm, err := c.client.GetReminder(r.Context(), r.PathValue("key"))
	if err != nil {
		return err
	}
	d := reminderData{R: rm, Doc: reminderDoc(rm), Saved: query(r, "saved") == "1"}
	c.renderReminder(w, r, http.StatusOK, s, d)
	return nil
}

func (c *Console) renderReminder(w http.ResponseWriter, r *http.Request, status int, s Session, d reminderData) {
	c.render(w, r, status, "reminder", page{Title: "Reminder " + d.R.Key, Path: "/console/reminders", Session: s, Data: d})
}

// reminderDoc is the reminder as PUT /v1/reminders/{key} takes it (the
// key is the address's).
func reminderDoc(rm herald.Reminder) string {
	in := herald.ReminderRequest{UserID: rm.UserID, Type: rm.Type, Title: rm.Title, Body: rm.Body, Data: rm.Data,
		Channels: rm.Channels, Priority: rm.Priority, DataOnly: rm.DataOnly, Schedule: rm.Schedule, Stop: rm.Stop,
		QuietHours: rm.QuietHours}
	out, _ := json.MarshalIndent(in, "", "  ")
	return string(out)
}

// saveReminder writes the reminder the textarea holds, as the API's PUT
// does: its schedule restarts from now and its sent count is kept; a
// stopped reminder saved again is active again. A refusal is shown beside
// the document, which keeps what was typed.
func (c *Console) saveReminder(w http.ResponseWriter, r *http.Request, s Session) error {
	key := r.PathValue("key")
	doc := r.PostForm.Get("reminder")
	var in herald.ReminderRequest
	err := decodeStrict("reminder", doc, &in)
	if err == nil {
		in.Key = key
		_, _, err = c.client.PutReminder(r.Context(), in)
	}
	if err == nil {
		seeOther(w, r, pathLink("/console/reminders/", key)+"?saved=1")
		return nil
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	rm, gerr := c.client.GetReminder(r.Context(), key)
	if gerr != nil {
		return gerr
	}
	c.renderReminder(w, r, refusedStatus(fr), s, reminderData{R: rm, Doc: doc, Err: &fr})
	return nil
}
