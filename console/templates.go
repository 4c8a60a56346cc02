package console

import (
	"net/http"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// A type's message templates (issue 37): the latest version rendered in
// every locale with its sample data — each channel's sizes and SMS
// segments — and for a user named in ?user= (their locale, zone and
// devices); a test-send to one user (POST /v1/types/{type}/test-send).
// The templates are saved through the API (PUT /v1/types/{type}/templates).

// typeTemplatesData is the templates page's.
type typeTemplatesData struct {
	Type    string
	User    string
	Version int  // asked for (?version=, a notification's); 0: the latest
	None    bool // the type has no templates
	Created string
	Preview heraldtype.TemplatePreview
	// Versions are the latest saved versions, newest first.
	Versions []heraldtype.TemplateVersion
	Err      *formResult
	// Sent is a test-send's answer when it skipped a channel.
	Sent *herald.TestSendResult
}

// typeTemplates shows the preview; a type without templates says so.
func (c *Console) typeTemplates(w http.ResponseWriter, r *http.Request, s Session) error {
	d := typeTemplatesData{Type: r.PathValue("type"), User: query(r, "user")}
	var status int
	var err error
	if v := query(r, "version"); v != "" {
		if d.Version, err = strconv.Atoi(v); err != nil || d.Version < 1 {
			err = fieldError("version", "must be a positive integer")
		}
	}
	if err == nil {
		err = c.fillTemplates(r, &d)
	}
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	c.render(w, r, status, "type-templates", page{Title: "Templates of " + d.Type, Path: "/console/types", Session: s, Data: d})
	return nil
}

func (c *Console) fillTemplates(r *http.Request, d *typeTemplatesData) error {
	tv, err := c.client.GetTemplates(r.Context(), d.Type, d.Version)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND && d.Version == 0 {
		d.None = true
		return nil
	}
	if err != nil {
		return err
	}
	d.Created = tv.CreatedAt.UTC().Format("2006-01-02 15:04:05")
	if d.Versions, err = c.client.ListTemplateVersions(r.Context(), d.Type, 0, 0); err != nil {
		return err
	}
	d.Preview, err = c.client.PreviewTemplates(r.Context(), d.Type, herald.PreviewRequest{Version: tv.Version, UserID: d.User})
	return err
}

// testSendTemplates sends the type's latest templates to the user the
// form names and opens the notification it made; when a channel was
// skipped (an opt-out, no device, no address), it shows each channel's
// outcome first, so none is dropped unseen.
func (c *Console) testSendTemplates(w http.ResponseWriter, r *http.Request, s Session) error {
	typ, user := r.PathValue("type"), postValue(r, "user_id")
	res, err := c.client.TestSend(r.Context(), typ, herald.TestSendRequest{UserID: user})
	if err == nil && len(res.Notifications) == 1 {
		skipped := false
		for _, ch := range res.Channels {
			skipped = skipped || ch.Status == heraldtype.TestSendSkipped
		}
		if !skipped {
			seeOther(w, r, pathLink("/console/notifications/", res.Notifications[0].ID))
			return nil
		}
		d := typeTemplatesData{Type: typ, User: user, Sent: &res}
		if err := c.fillTemplates(r, &d); err != nil {
			return err
		}
		c.render(w, r, http.StatusOK, "type-templates", page{Title: "Templates of " + typ, Path: "/console/types", Session: s, Data: d})
		return nil
	}
	if err == nil {
		err = fieldError("user_id", "the test-send made no notification")
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	d := typeTemplatesData{Type: typ, User: user}
	if ferr := c.fillTemplates(r, &d); ferr != nil {
		if _, ok := refused(ferr); !ok {
			return ferr
		}
	}
	d.Err = &fr
	c.render(w, r, refusedStatus(fr), "type-templates", page{Title: "Templates of " + typ, Path: "/console/types", Session: s, Data: d})
	return nil
}
