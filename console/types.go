package console

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The notification types: the list, and one type's configuration with
// its form (PUT /v1/types/{type}, admin).

// typesData is the types list's. The catalogue is small — the declared
// types and those set through the API — and the API lists it whole.
type typesData struct {
	Types []herald.NotificationType
}

// types lists the notification types; ?name= opens one (a new name shows
// the defaults, ready to be set).
func (c *Console) types(w http.ResponseWriter, r *http.Request, s Session) error {
	if name := query(r, "name"); name != "" {
		seeOther(w, r, pathLink("/console/types/", name))
		return nil
	}
	ts, err := c.client.ListTypes(r.Context())
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "types", page{Title: "Notification types", Session: s, Data: typesData{Types: ts}})
	return nil
}

// typeForm is the type form's values: as configured, or as posted.
type typeForm struct {
	Channels, Priority, DedupeWindow, CountsTowardCap, Guarantee string
	QuietHours, Critical, Transactional, EmailTracking           bool
}

// typeData is one type's page.
type typeData struct {
	T         herald.NotificationType
	Form      typeForm
	Err       *formResult
	Saved     bool
	Channels  []heraldtype.Channel
	Priority  []string
	Guarantee []string
}

func (c *Console) notificationType(w http.ResponseWriter, r *http.Request, s Session) error {
	t, err := c.client.GetType(r.Context(), r.PathValue("type"))
	if err != nil {
		return err
	}
	d := typeData{T: t, Form: formOfType(t), Saved: r.URL.Query().Get("saved") == "1"}
	c.renderType(w, r, http.StatusOK, s, d)
	return nil
}

func (c *Console) renderType(w http.ResponseWriter, r *http.Request, status int, s Session, d typeData) {
	d.Channels = prefChannels
	d.Priority = []string{string(heraldtype.PriorityLow), string(heraldtype.PriorityNormal), string(heraldtype.PriorityHigh)}
	d.Guarantee = []string{string(heraldtype.AtLeastOnce), string(heraldtype.AtMostOnce)}
	c.render(w, r, status, "type", page{Title: "Type " + d.T.Name, Path: "/console/types", Session: s, Data: d})
}

// saveType sets the type's configuration from the form.
func (c *Console) saveType(w http.ResponseWriter, r *http.Request, s Session) error {
	name := r.PathValue("type")
	f := typeForm{Channels: postValue(r, "channels"), Priority: postValue(r, "priority"), DedupeWindow: postValue(r, "dedupe_window"),
		CountsTowardCap: postValue(r, "counts_toward_cap"), Guarantee: postValue(r, "guarantee"),
		QuietHours: r.PostForm.Get("quiet_hours") != "", Critical: r.PostForm.Get("critical") != "", Transactional: r.PostForm.Get("transactional") != "",
		EmailTracking: r.PostForm.Get("email_tracking") != ""}
	tc := herald.TypeConfig{Priority: heraldtype.Priority(f.Priority), DedupeWindow: f.DedupeWindow, QuietHours: &f.QuietHours,
		Guarantee: heraldtype.Guarantee(f.Guarantee), Critical: f.Critical, Transactional: f.Transactional, EmailTracking: f.EmailTracking}
	for _, ch := range splitList(f.Channels) {
		tc.Channels = append(tc.Channels, heraldtype.Channel(ch))
	}
	var err error
	switch f.CountsTowardCap {
	case "", "default":
	case "yes", "no":
		v := f.CountsTowardCap == "yes"
		tc.CountsTowardCap = &v
	default:
		err = fieldError("counts_toward_cap", "must be default, yes or no")
	}
	if err == nil {
		// The form does not edit the digest nor the escalation: it keeps
		// the ones declared.
		var cur herald.NotificationType
		if cur, err = c.client.GetType(r.Context(), name); err == nil {
			tc.Digest, tc.Escalate = cur.Digest, cur.Escalate
			_, err = c.client.PutType(r.Context(), name, tc)
		}
	}
	if err == nil {
		seeOther(w, r, pathLink("/console/types/", name)+"?saved=1")
		return nil
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	// The form is shown again with the refusal beside its field; a type
	// being declared for the first time has no stored version yet.
	t, gerr := c.client.GetType(r.Context(), name)
	if heraldtype.ErrorCode(gerr) == heraldtype.ENOTFOUND {
		t, gerr = herald.NotificationType{Name: name}, nil
	}
	if gerr != nil {
		return gerr
	}
	c.renderType(w, r, refusedStatus(fr), s, typeData{T: t, Form: f, Err: &fr})
	return nil
}

func formOfType(t herald.NotificationType) typeForm {
	f := typeForm{Channels: channelList(t.Channels), Priority: string(t.Priority), DedupeWindow: t.DedupeWindow,
		Guarantee: string(t.Guarantee), QuietHours: t.QuietHours, Critical: t.Critical, Transactional: t.Transactional,
		EmailTracking: t.EmailTracking, CountsTowardCap: "default"}
	if len(t.Channels) == 0 {
		f.Channels = ""
	}
	if t.CountsTowardCap != nil {
		f.CountsTowardCap = "no"
		if *t.CountsTowardCap {
			f.CountsTowardCap = "yes"
		}
	}
	return f
}
