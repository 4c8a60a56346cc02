package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Path ids are passed to the Client unchecked: it validates them (length,
// no slash or control characters, valid UTF-8) and answers a bad one with
// invalid_argument, so a hostile path is a 400, never a 500.

// putUser: PUT /v1/users/{id} creates or replaces a user (S0.1). An empty
// body creates the user with every field defaulted.
func (s *Server) putUser(w http.ResponseWriter, r *http.Request) error {
	var in herald.UserInput
	if err := s.decodeJSON(w, r, &in, bodySpec{optional: true}); err != nil {
		return err
	}
	u, err := s.client.PutUser(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// getUser: GET /v1/users/{id}.
func (s *Server) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.client.GetUser(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// registerDevice: POST /v1/users/{id}/devices upserts a device by its
// device_id (S0.1, S0.2), from the app or from the app's backend at login.
// A user token (whose sub is {id}) registers as the user itself, with
// RegisterOwnDevice's rules, exactly as POST /v1/tokens; only a server key
// may move another user's device (issue 18).
func (s *Server) registerDevice(w http.ResponseWriter, r *http.Request) error {
	var in herald.DeviceInput
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	register := s.client.RegisterDevice
	if principalFrom(r.Context()).userID != "" {
		register = s.client.RegisterOwnDevice
	}
	d, err := register(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// deviceList is the body of GET /v1/users/{id}/devices.
type deviceList struct {
	Devices []heraldtype.Device `json:"devices"`
}

// listDevices: GET /v1/users/{id}/devices. A user token sees its devices
// as ListOwnDevices shows them.
func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) error {
	list := s.client.ListDevices
	if principalFrom(r.Context()).userID != "" {
		list = s.client.ListOwnDevices
	}
	ds, err := list(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []heraldtype.Device{} // [] rather than null for a user without devices
	}
	writeJSON(w, http.StatusOK, deviceList{Devices: ds})
	return nil
}

// deleteDevice: DELETE /v1/users/{id}/devices/{device_id}.
func (s *Server) deleteDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.DeleteDevice(r.Context(), r.PathValue("id"), r.PathValue("device_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// heartbeat: POST /v1/devices/{device_id}/heartbeat (S0.2). It takes no
// body; one that is sent is ignored.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) error {
	if err := s.client.Heartbeat(r.Context(), r.PathValue("device_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
