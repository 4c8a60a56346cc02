package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
)

// The app's own endpoints (S0.2): called by the app with a user token its
// backend signed, so the user is always the token's sub and never a field
// of the request.

// registerOwnDevice: POST /v1/tokens registers or refreshes the caller's
// device: token, platform, app_version, push_opt_in, device_id.
func (s *Server) registerOwnDevice(w http.ResponseWriter, r *http.Request) error {
	var in herald.DeviceInput
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	d, err := s.client.RegisterOwnDevice(r.Context(), principalFrom(r.Context()).userID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// heartbeatOwnDevice: POST /v1/tokens/heartbeat {"device_id"} or
// {"token"} records that the caller's device is still in use.
func (s *Server) heartbeatOwnDevice(w http.ResponseWriter, r *http.Request) error {
	var in herald.OwnHeartbeat
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	if err := s.client.HeartbeatOwnDevice(r.Context(), principalFrom(r.Context()).userID, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
