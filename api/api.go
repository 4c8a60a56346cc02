// Package api holds Herald's HTTP API contract: the OpenAPI 3.1 document
// (openapi.yaml), written by hand and held to the server by the tests
// (internal/apitest validates every request and response of the HTTP and
// end-to-end suites against it; httpapi's route test compares it with the
// routes the server registers). The server serves it at GET /openapi.yaml
// and GET /openapi.json.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

// YAML is the OpenAPI document as written.
//
//go:embed openapi.yaml
var YAML []byte

var jsonDoc = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(YAML, &doc); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

// JSON is the same document as JSON.
func JSON() ([]byte, error) { return jsonDoc() }
