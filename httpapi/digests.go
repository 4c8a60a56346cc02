package httpapi

import "net/http"

// getDigest: GET /v1/digests/{id} returns a digest (issue 36 item 1): whose,
// its type and key, its state and window, its notification once sent, and
// the triggers it holds.
func (s *Server) getDigest(w http.ResponseWriter, r *http.Request) error {
	d, err := s.client.GetDigest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}
