package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald/api"
)

// openAPIYAML: GET /openapi.yaml serves the API's contract as written
// (api/openapi.yaml). It is public, like the API's documentation.
func (s *Server) openAPIYAML(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(api.YAML)
	return nil
}

// openAPIJSON: GET /openapi.json serves the same document as JSON.
func (s *Server) openAPIJSON(w http.ResponseWriter, _ *http.Request) error {
	b, err := api.JSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
	return nil
}
