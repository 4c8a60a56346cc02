package httpapi

import (
	"net/http"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// interestsBody is POST /v1/interests' body: one interest
// (herald.InterestInput's fields) or a batch under "interests".
type interestsBody struct {
	UserID    string                 `json:"user_id"`
	Subject   string                 `json:"subject"`
	Kind      string                 `json:"kind"`
	At        *time.Time             `json:"at"`
	Data      map[string]string      `json:"data"`
	Interests []herald.InterestInput `json:"interests"`
}

// postInterests: POST /v1/interests records one interest or a batch of
// them (issue 20 item 3, S3.3), in one transaction; the answer says how
// many: {"recorded": n}.
func (s *Server) postInterests(w http.ResponseWriter, r *http.Request) error {
	var in interestsBody
	if err := s.decodeJSON(w, r, &in, bodySpec{timeField: "at"}); err != nil {
		return err
	}
	one := herald.InterestInput{UserID: in.UserID, Subject: in.Subject, Kind: in.Kind, At: in.At, Data: in.Data}
	batch := in.Interests
	switch {
	case in.Interests != nil && (one.UserID != "" || one.Subject != "" || one.Kind != "" || one.At != nil || one.Data != nil):
		return heraldtype.FieldErrorf("interests", "give either one interest or a list of them, not both")
	case in.Interests == nil:
		batch = []herald.InterestInput{one}
	}
	n, err := s.client.RecordInterests(r.Context(), batch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"recorded": n})
	return nil
}

// listInterests: GET /v1/users/{id}/interests?subject=&cursor=&limit=
// lists the user's interests by subject and kind.
func (s *Server) listInterests(w http.ResponseWriter, r *http.Request) error {
	f := herald.InterestFilter{UserID: r.PathValue("id")}
	if err := parseQuery(r.URL.RawQuery, map[string]func(string) error{
		"subject": setString(&f.Subject), "cursor": setString(&f.Cursor), "limit": setLimit(&f.Limit),
	}); err != nil {
		return err
	}
	page, err := s.client.ListInterests(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
