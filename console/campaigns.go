package console

import (
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The campaigns: the list, one campaign with its runs, editing it as a
// JSON document (PUT /v1/campaigns/{name}) and running it now
// (POST /v1/campaigns/{name}/run), both campaigns:write.

// campaignsData is the campaigns list's.
type campaignsData struct {
	Campaigns []herald.Campaign
	Next      string
}

func (c *Console) campaigns(w http.ResponseWriter, r *http.Request, s Session) error {
	if name := query(r, "name"); name != "" {
		seeOther(w, r, pathLink("/console/campaigns/", name)+"?new=1")
		return nil
	}
	p, err := c.client.ListCampaigns(r.Context(), herald.CampaignFilter{Cursor: query(r, "cursor"), Limit: listLimit})
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "campaigns", page{Title: "Campaigns", Session: s, Data: campaignsData{Campaigns: p.Campaigns, Next: nextLink(r, p.NextCursor)}})
	return nil
}

// campaignData is one campaign's page.
type campaignData struct {
	Name     string
	Exists   bool
	Campaign herald.Campaign
	Doc      string
	Err      *formResult
	Saved    bool
	// Ran is the run the button just started.
	Ran      string
	Runs     []herald.CampaignRun
	NextRuns string
}

// newCampaignDoc is the skeleton a new campaign's textarea starts from.
const newCampaignDoc = `{
  "schedule": {"rrule": "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9"},
  "audience": {"all": true},
  "type": "digest",
  "title": "Your weekly digest",
  "paused": true
}`

func (c *Console) campaign(w http.ResponseWriter, r *http.Request, s Session) error {
	d, err := c.campaignData(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	d.Saved, d.Ran = r.URL.Query().Get("saved") == "1", query(r, "ran")
	c.renderCampaign(w, r, http.StatusOK, s, d)
	return nil
}

func (c *Console) renderCampaign(w http.ResponseWriter, r *http.Request, status int, s Session, d campaignData) {
	c.render(w, r, status, "campaign", page{Title: "Campaign " + d.Name, Path: "/console/campaigns", Session: s, Data: d})
}

// campaignData reads the campaign and a page of its runs; a campaign not
// found is a new one when the page was opened to write it.
func (c *Console) campaignData(r *http.Request, name string) (campaignData, error) {
	d := campaignData{Name: name}
	cp, err := c.client.GetCampaign(r.Context(), name)
	switch {
	case err == nil:
		d.Exists, d.Campaign, d.Doc = true, cp, campaignDoc(cp)
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND && (r.URL.Query().Get("new") == "1" || r.Method == http.MethodPost):
		d.Doc = newCampaignDoc
		return d, nil
	default:
		return d, err
	}
	runs, err := c.client.ListCampaignRuns(r.Context(), herald.CampaignRunFilter{Campaign: name, Cursor: query(r, "cursor"), Limit: userSectionLimit})
	if err != nil {
		return d, err
	}
	d.Runs, d.NextRuns = runs.Runs, nextLink(r, runs.NextCursor)
	return d, nil
}

// campaignDoc is the campaign as the textarea shows it: what a PUT
// takes. The fetch's secret is the name of a declared secret, never its
// value, so it is shown like the rest.
func campaignDoc(cp herald.Campaign) string {
	in := herald.CampaignRequest{Schedule: cp.Schedule, Audience: cp.Audience, Type: cp.Type, Title: cp.Title, Body: cp.Body,
		Data: cp.Data, Channels: cp.Channels, Priority: cp.Priority, Fetch: cp.Fetch, LocalTime: cp.LocalTime, Paused: cp.Paused}
	out, _ := json.MarshalIndent(in, "", "  ")
	return string(out)
}

// saveCampaign writes the campaign the textarea holds.
func (c *Console) saveCampaign(w http.ResponseWriter, r *http.Request, s Session) error {
	name := r.PathValue("name")
	doc := r.PostForm.Get("campaign")
	var in herald.CampaignRequest
	err := decodeStrict("campaign", doc, &in)
	if err == nil {
		in.Name = name
		_, _, err = c.client.PutCampaign(r.Context(), in)
	}
	if err == nil {
		seeOther(w, r, pathLink("/console/campaigns/", name)+"?saved=1")
		return nil
	}
	fr, ok := refused(err)
	if !ok {
		return err
	}
	d, derr := c.campaignData(r, name)
	if derr != nil {
		return derr
	}
	d.Doc, d.Err = doc, &fr
	c.renderCampaign(w, r, refusedStatus(fr), s, d)
	return nil
}

// runCampaign starts a manual run to the whole audience now.
func (c *Console) runCampaign(w http.ResponseWriter, r *http.Request, s Session) error {
	name := r.PathValue("name")
	run, err := c.client.RunCampaign(r.Context(), name, "")
	if err != nil {
		return err
	}
	seeOther(w, r, pathLink("/console/campaigns/", name)+"?ran="+queryEscape(run.ID))
	return nil
}
