package api_test

import (
	"context"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/heraldhq/herald/api"
)

// TestDocumentIsValid loads the document as kin-openapi does for the
// validator and checks it against the OpenAPI 3.1 rules it knows.
func TestDocumentIsValid(t *testing.T) {
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation(), openapi3.EnableSchemaPatternValidation()); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version == "" {
		t.Fatal("info.version is empty")
	}
}

// TestJSONIsTheSameDocument: the JSON form parses to the same document.
func TestJSONIsTheSameDocument(t *testing.T) {
	j, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	l := openapi3.NewLoader()
	fromJSON, err := l.LoadFromData(j)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if fromJSON.Paths.Len() != fromYAML.Paths.Len() || fromJSON.Info.Version != fromYAML.Info.Version {
		t.Fatalf("JSON has %d paths (version %s), YAML %d (%s)", fromJSON.Paths.Len(), fromJSON.Info.Version, fromYAML.Paths.Len(), fromYAML.Info.Version)
	}
}
