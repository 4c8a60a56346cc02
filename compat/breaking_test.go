package compat

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// The document as it is now, and the released ones it must stay
// compatible with: api/released/openapi-<major>.yaml, the last release of
// each major version.
const (
	currentDoc  = "../api/openapi.yaml"
	releasedDir = "../api/released"
)

// breakingLevels raises to ERR two changes oasdiff reports as less: a
// removed optional response field (a client reading it breaks; most of
// Herald's response fields are optional, omitted when empty) and a removed
// request field (Herald rejects unknown request fields, so a client still
// sending it gets a 400). The version rules are off: the test applies its
// own (a breaking change needs a greater major version).
var breakingLevels = map[string]checker.Level{
	checker.ResponseOptionalPropertyRemovedId: checker.ERR,
	checker.RequestPropertyRemovedId:          checker.ERR,
	checker.APIVersionNotBumpedId:             checker.NONE,
	checker.APIVersionDecreasedId:             checker.NONE,
	checker.APIMajorVersionNotBumpedId:        checker.NONE,
}

// loadDoc loads an OpenAPI document for oasdiff; location names it in
// the changes.
func loadDoc(t *testing.T, data []byte, location string) *load.SpecInfo {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("%s: %v", location, err)
	}
	if doc.Info == nil {
		t.Fatalf("%s: no info", location)
	}
	return &load.SpecInfo{Url: location, Spec: doc, Version: doc.Info.Version}
}

// breakingChanges is what oasdiff reports at level ERR from base to
// revision.
func breakingChanges(t *testing.T, base, revision *load.SpecInfo) checker.Changes {
	t.Helper()
	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), base, revision)
	if err != nil {
		t.Fatalf("oasdiff: %v", err)
	}
	config := checker.NewConfig(checker.GetAllChecks(), checker.WithSeverityLevels(breakingLevels))
	return checker.CheckBackwardCompatibilityUntilLevel(config, d, sources, checker.ERR)
}

func describe(changes checker.Changes) string {
	l := checker.NewDefaultLocalizer()
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "\n  %s %s: %s (%s)", c.GetOperation(), c.GetPath(), c.GetUncolorizedText(l), c.GetId())
	}
	return b.String()
}

// majorOf is the major part of a "1.2.3" info.version.
func majorOf(t *testing.T, version string) int {
	t.Helper()
	m, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err != nil {
		t.Fatalf("info.version %q: the major part is not a number", version)
	}
	return m
}

// lastReleased is the released document with the greatest major version.
func lastReleased(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(releasedDir, "openapi-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no released document in api/released (openapi-<major>.yaml): %v", err)
	}
	re := regexp.MustCompile(`openapi-(\d+)\.yaml$`)
	last, lastMajor := "", -1
	for _, f := range files {
		if m := re.FindStringSubmatch(f); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > lastMajor {
				last, lastMajor = f, n
			}
		}
	}
	if last == "" {
		t.Fatalf("no api/released/openapi-<major>.yaml among %v", files)
	}
	return last
}

// TestOpenAPIBreakingChanges compares api/openapi.yaml with the last
// released document: a change that breaks a client of the release (a
// removed operation, field or enum value, a narrowed type, a new required
// parameter, …) fails unless info.version's major part is greater than
// the release's.
func TestOpenAPIBreakingChanges(t *testing.T) {
	releasedPath := lastReleased(t)
	releasedData, err := os.ReadFile(releasedPath)
	if err != nil {
		t.Fatal(err)
	}
	currentData, err := os.ReadFile(currentDoc)
	if err != nil {
		t.Fatal(err)
	}
	released := loadDoc(t, releasedData, "api/released/"+filepath.Base(releasedPath))
	current := loadDoc(t, currentData, "api/openapi.yaml")
	changes := breakingChanges(t, released, current)
	if len(changes) == 0 {
		t.Logf("api/openapi.yaml %s: no breaking change since %s %s", current.Version, released.Url, released.Version)
		return
	}
	if majorOf(t, current.Version) > majorOf(t, released.Version) {
		t.Logf("api/openapi.yaml %s breaks %s %s, allowed by the new major version:%s", current.Version, released.Url, released.Version, describe(changes))
		return
	}
	t.Errorf("api/openapi.yaml %s has %d breaking changes since %s %s; keep the old behaviour, or raise info.version's major part (and keep the release as api/released/openapi-<major>.yaml):%s",
		current.Version, len(changes), released.Url, released.Version, describe(changes))
}

// TestOpenAPIBreakingChangesBite proves the comparison sees each kind of
// breaking change, each made to an in-memory copy of api/openapi.yaml: a
// removed response field, a removed operation, a removed enum value and a
// narrowed type.
func TestOpenAPIBreakingChangesBite(t *testing.T) {
	data, err := os.ReadFile(currentDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, doc *openapi3.T) string
		ids    []string // one of them must be reported
	}{
		{"removed response field", removeResponseField,
			[]string{checker.ResponseRequiredPropertyRemovedId, checker.ResponseOptionalPropertyRemovedId}},
		{"removed operation", removeOperation,
			[]string{checker.APIRemovedWithoutDeprecationId, checker.APIPathRemovedWithoutDeprecationId}},
		{"removed enum value", removeEnumValue,
			[]string{checker.RequestParameterEnumValueRemovedId, checker.RequestPropertyEnumValueRemovedId, checker.RequestBodyEnumValueRemovedId}},
		{"narrowed type", narrowType,
			[]string{checker.RequestPropertyTypeChangedId, checker.RequestParameterTypeChangedId}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := loadDoc(t, data, "api/openapi.yaml")
			revision := loadDoc(t, data, "api/openapi.yaml (changed)")
			what := tc.mutate(t, revision.Spec)
			changes := breakingChanges(t, base, revision)
			for _, c := range changes {
				if slices.Contains(tc.ids, c.GetId()) {
					t.Logf("%s: reported:%s", what, describe(checker.Changes{c}))
					return
				}
			}
			t.Errorf("%s: none of %v reported; reported:%s", what, tc.ids, describe(changes))
		})
	}
}

// operations lists the document's operations in a stable order.
func operations(doc *openapi3.T) []struct {
	path, method string
	op           *openapi3.Operation
} {
	var ops []struct {
		path, method string
		op           *openapi3.Operation
	}
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(path)
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			ops = append(ops, struct {
				path, method string
				op           *openapi3.Operation
			}{path, method, item.GetOperation(method)})
		}
	}
	return ops
}

func jsonSchema(content openapi3.Content) *openapi3.Schema {
	if mt := content.Get("application/json"); mt != nil && mt.Schema != nil {
		return mt.Schema.Value
	}
	return nil
}

// removeResponseField removes a property from the first success response
// body that has one.
func removeResponseField(t *testing.T, doc *openapi3.T) string {
	for _, o := range operations(doc) {
		for _, status := range []int{200, 201, 202} {
			r := o.op.Responses.Status(status)
			if r == nil || r.Value == nil {
				continue
			}
			s := jsonSchema(r.Value.Content)
			if s == nil || len(s.Properties) == 0 {
				continue
			}
			name := slices.Sorted(maps.Keys(s.Properties))[0]
			delete(s.Properties, name)
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			return fmt.Sprintf("%s %s: response %d without %q", o.method, o.path, status, name)
		}
	}
	t.Fatal("no success response with a JSON object body in api/openapi.yaml")
	return ""
}

// removeOperation removes a path's first operation.
func removeOperation(t *testing.T, doc *openapi3.T) string {
	for _, o := range operations(doc) {
		if strings.HasPrefix(o.path, "/v1/") {
			doc.Paths.Value(o.path).SetOperation(o.method, nil)
			return fmt.Sprintf("%s %s removed", o.method, o.path)
		}
	}
	t.Fatal("no /v1/ operation in api/openapi.yaml")
	return ""
}

// removeEnumValue removes the last value of the first enum a request
// takes: a parameter's, else a top-level property of a JSON request body.
func removeEnumValue(t *testing.T, doc *openapi3.T) string {
	shrink := func(s *openapi3.Schema) bool {
		if s == nil || len(s.Enum) < 2 {
			return false
		}
		s.Enum = s.Enum[:len(s.Enum)-1]
		return true
	}
	for _, o := range operations(doc) {
		for _, p := range o.op.Parameters {
			if p.Value != nil && p.Value.Schema != nil && shrink(p.Value.Schema.Value) {
				return fmt.Sprintf("%s %s: parameter %s lost an enum value", o.method, o.path, p.Value.Name)
			}
		}
	}
	for _, o := range operations(doc) {
		if o.op.RequestBody == nil || o.op.RequestBody.Value == nil {
			continue
		}
		s := jsonSchema(o.op.RequestBody.Value.Content)
		if s == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if shrink(s.Properties[name].Value) {
				return fmt.Sprintf("%s %s: request field %s lost an enum value", o.method, o.path, name)
			}
		}
	}
	t.Fatal("no enum in a request parameter or request body field of api/openapi.yaml")
	return ""
}

// narrowType narrows a request body field's type: a number becomes an
// integer, or else a free string becomes a date-time.
func narrowType(t *testing.T, doc *openapi3.T) string {
	for _, want := range []string{"number", "string"} {
		for _, o := range operations(doc) {
			if o.op.RequestBody == nil || o.op.RequestBody.Value == nil {
				continue
			}
			s := jsonSchema(o.op.RequestBody.Value.Content)
			if s == nil {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
				p := s.Properties[name].Value
				if p == nil || !p.Type.Is(want) || len(p.Enum) > 0 || p.Format != "" {
					continue
				}
				if want == "number" {
					p.Type = &openapi3.Types{"integer"}
					return fmt.Sprintf("%s %s: request field %s is an integer, no longer any number", o.method, o.path, name)
				}
				p.Format = "date-time"
				return fmt.Sprintf("%s %s: request field %s is a date-time, no longer any string", o.method, o.path, name)
			}
		}
	}
	t.Fatal("no number or free string field in a JSON request body of api/openapi.yaml")
	return ""
}
