// Package apitest holds the HTTP API's tests to its contract: every
// request a test sends and every response it receives pass through a
// validator built from api/openapi.yaml (kin-openapi's openapi3filter), and
// a difference fails the test that produced it (issue 33 item 2).
//
// What the validator holds, for an exchange that matches a documented
// operation:
//   - the response: its status is one the operation documents, its headers
//     are documented for that status (beside the transport's own), and its
//     JSON body matches the schema — an extra field, a missing one, a wrong
//     type or an error code the status does not list fails;
//   - the request: when the server accepted it (2xx), the document must
//     accept it too — its parameters, query names and body. A request the
//     server refused may be one the document refuses as well: tests send
//     bad input on purpose.
//
// An exchange that matches no documented path or method must be an error
// in the documented error body. Whether every route the server registers
// is documented is the route test's question (httpapi), not this one's.
//
// It is for tests only: the product never imports it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/heraldhq/herald/api"
)

// Validator checks exchanges against one OpenAPI document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	errSch *openapi3.Schema
}

var defaultValidator = sync.OnceValues(func() (*Validator, error) { return New(api.YAML) })

// Default is the validator of the document the server embeds.
func Default() (*Validator, error) { return defaultValidator() }

// New builds a validator from a document's YAML or JSON.
func New(doc []byte) (*Validator, error) {
	d, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: loading the document: %w", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("apitest: the document is invalid: %w", err)
	}
	// Route on the path alone: the tests' servers listen on any port.
	d.Servers = nil
	r, err := legacy.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("apitest: routing the document: %w", err)
	}
	es := d.Components.Schemas["Error"]
	if es == nil || es.Value == nil {
		return nil, errors.New("apitest: the document has no Error schema")
	}
	return &Validator{doc: d, router: r, errSch: es.Value}, nil
}

// transportHeaders are set by net/http, by the CORS layer or by a proxy,
// not by an operation; a response may carry them without the document
// naming them.
//
// X-Request-Id is on every response (the server's ServeHTTP sets it
// before routing); the document says so once, in its description and on
// the shared error responses, rather than on each of some hundred
// responses.
var transportHeaders = []string{
	"X-Request-Id", "Content-Type", "Content-Length", "Date", "Connection", "Transfer-Encoding", "Vary",
	"Cache-Control", "X-Content-Type-Options", "Content-Encoding", "Keep-Alive",
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers",
	"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age",
	"Upgrade", "Sec-Websocket-Accept", "Sec-Websocket-Protocol", "Sec-Websocket-Extensions",
}

// Exchange is one request and its response, with their bodies read.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
	// Streamed says the body is a stream (SSE) or the connection was
	// taken over (WebSocket): only the status and headers are checked.
	Streamed bool
}

// Check validates one exchange and returns what differs from the
// document, or nil.
func (v *Validator) Check(x Exchange) error {
	req := x.Request.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return v.checkUnrouted(x, err)
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	// The reason and where, without the schema and the value dumped.
	opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string {
		if p := e.JSONPointer(); len(p) > 0 {
			return "at /" + strings.Join(p, "/") + ": " + e.Reason
		}
		return e.Reason
	})
	req = asJSON(route, req, x.RequestBody)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	accepted := x.Status >= 200 && x.Status < 300 || x.Status == http.StatusSwitchingProtocols
	if accepted {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("%s %s was answered %d, but the document refuses the request: %w", x.Request.Method, x.Request.URL.RequestURI(), x.Status, err)
		}
		if err := checkQueryNames(route, x.Request); err != nil {
			return err
		}
	}
	if x.Status == http.StatusSwitchingProtocols {
		if route.Operation.Responses.Status(x.Status) == nil {
			return fmt.Errorf("%s %s switched protocols, which the document does not say", x.Request.Method, x.Request.URL.Path)
		}
		return nil
	}
	ropts := *opts
	ropts.ExcludeResponseBody = x.Streamed
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: &ropts}
	out.SetBodyBytes(x.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("%s %s answered %d %s: %w", x.Request.Method, x.Request.URL.RequestURI(), x.Status, clip(x.Body), err)
	}
	// The response ValidateResponse checked: the status's, else the
	// default (a status with neither failed above).
	resp := route.Operation.Responses.Status(x.Status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	for name := range x.Header {
		if slices.Contains(transportHeaders, name) {
			continue
		}
		if !hasHeaderFold(resp.Value.Headers, name) {
			return fmt.Errorf("%s %s answered %d with header %s, which the document does not list for that status", x.Request.Method, x.Request.URL.Path, x.Status, name)
		}
	}
	return nil
}

// checkUnrouted: a request the document has no operation for must be
// answered with the error body (a 404 for an unknown path, a 405 for a
// method the path lacks, a 401 first when the credentials are missing).
func (v *Validator) checkUnrouted(x Exchange, routeErr error) error {
	if x.Status >= 200 && x.Status < 300 || x.Status == http.StatusSwitchingProtocols {
		// An undocumented route that answers: the route test reports it.
		// A CORS preflight answers 204 for any path.
		return nil
	}
	if x.Status < 400 {
		return fmt.Errorf("%s %s matches no operation (%v) and answered %d", x.Request.Method, x.Request.URL.Path, routeErr, x.Status)
	}
	if ct, _, _ := mime.ParseMediaType(x.Header.Get("Content-Type")); ct != "application/json" {
		return fmt.Errorf("%s %s matches no operation and answered %d as %q, not the JSON error body", x.Request.Method, x.Request.URL.Path, x.Status, ct)
	}
	var body any
	if err := json.Unmarshal(x.Body, &body); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not JSON: %s", x.Request.Method, x.Request.URL.Path, x.Status, clip(x.Body))
	}
	if err := v.errSch.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s %s answered %d with a body that is not the Error schema: %w", x.Request.Method, x.Request.URL.Path, x.Status, err)
	}
	return nil
}

// checkQueryNames: kin-openapi lets undocumented query parameters pass;
// the server refuses them, so one it accepted must be documented.
func checkQueryNames(route *routers.Route, r *http.Request) error {
	known := map[string]bool{}
	for _, ps := range []openapi3.Parameters{route.PathItem.Parameters, route.Operation.Parameters} {
		for _, p := range ps {
			if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
				known[p.Value.Name] = true
			}
		}
	}
	for name := range r.URL.Query() {
		if !known[name] {
			return fmt.Errorf("%s %s was accepted with query parameter %q, which the document does not list", r.Method, r.URL.Path, name)
		}
	}
	return nil
}

func hasHeaderFold(hs openapi3.Headers, name string) bool {
	for k := range hs {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
