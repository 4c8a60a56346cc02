package httpapi

import "net/http"

// vapidPublicKey: GET /v1/webpush/vapid-public-key answers the Web Push
// provider's VAPID public key, {"public_key":"B…"} (base64url, the
// applicationServerKey PushManager.subscribe takes); 404 when no Web Push
// provider is configured (issue 21 item 6).
func (s *Server) vapidPublicKey(w http.ResponseWriter, r *http.Request) error {
	key, err := s.client.VAPIDPublicKey()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"public_key": key})
	return nil
}
