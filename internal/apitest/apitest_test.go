package apitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/internal/apitest"
)

// A small document with one strict operation, to show what the validator
// refuses; the real document is checked by the suites that use it.
const doc = `
openapi: 3.1.0
info: {title: t, version: 1.0.0}
paths:
  /v1/things/{id}:
    put:
      operationId: putThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, maxLength: 8}}
        - {name: dry, in: query, schema: {type: boolean}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties: {size: {type: integer, minimum: 1}}
      responses:
        "200":
          description: ok
          headers:
            Idempotent-Replayed: {schema: {type: string}}
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [id, size]
                properties:
                  id: {type: string}
                  size: {type: integer}
        "400":
          description: bad
          content:
            application/json:
              schema:
                allOf:
                  - $ref: "#/components/schemas/Error"
                  - properties: {code: {const: invalid_argument}}
components:
  schemas:
    Error:
      type: object
      additionalProperties: false
      required: [code, message]
      properties:
        code: {type: string, enum: [invalid_argument, not_found, method_not_allowed]}
        message: {type: string}
        field: {type: string}
`

// fakeT collects what the validator reports.
type fakeT struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Helper() {}

func TestValidatorBites(t *testing.T) {
	v, err := apitest.New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, target, reqBody string
		status                        int
		header                        [2]string
		body                          string
		want                          string // "" = no complaint
	}{
		{"conforming", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{}, `{"id":"a","size":2}`, ""},
		{"an injected extra field", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{}, `{"id":"a","size":2,"extra":1}`, "extra"},
		{"a missing field", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{}, `{"id":"a"}`, "size"},
		{"a wrong type", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{}, `{"id":"a","size":"2"}`, "size"},
		{"an undocumented status", "PUT", "/v1/things/a", `{"size":2}`, 409, [2]string{}, `{"code":"conflict","message":"x"}`, "status"},
		{"an error code the status does not list", "PUT", "/v1/things/a", `{}`, 400, [2]string{}, `{"code":"not_found","message":"x"}`, "code"},
		{"a documented header", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{"Idempotent-Replayed", "true"}, `{"id":"a","size":2}`, ""},
		{"an undocumented header", "PUT", "/v1/things/a", `{"size":2}`, 200, [2]string{"X-Secret", "1"}, `{"id":"a","size":2}`, "X-Secret"},
		{"a request the server accepts and the document refuses", "PUT", "/v1/things/a", `{"size":2,"colour":"red"}`, 200, [2]string{}, `{"id":"a","size":2}`, "refuses the request"},
		{"a path parameter beyond its limit, accepted", "PUT", "/v1/things/toolongid", `{"size":2}`, 200, [2]string{}, `{"id":"a","size":2}`, "refuses the request"},
		{"an undocumented query parameter, accepted", "PUT", "/v1/things/a?colour=red", `{"size":2}`, 200, [2]string{}, `{"id":"a","size":2}`, "colour"},
		{"a bad request the server refuses", "PUT", "/v1/things/a", `{"size":0}`, 400, [2]string{}, `{"code":"invalid_argument","message":"x","field":"size"}`, ""},
		{"an unknown path answered with the error body", "GET", "/nowhere", ``, 404, [2]string{}, `{"code":"not_found","message":"x"}`, ""},
		{"an unknown path answered otherwise", "GET", "/nowhere", ``, 404, [2]string{}, `not found`, "JSON"},
		{"an unknown method answered with a bad error body", "GET", "/v1/things/a", ``, 405, [2]string{}, `{"code":"method_not_allowed"}`, "message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				if c.header[0] != "" {
					w.Header().Set(c.header[0], c.header[1])
				}
				ct := "application/json"
				if !strings.HasPrefix(c.body, "{") {
					ct = "text/plain"
				}
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			})
			// Both ways in: as a handler, and as a client's transport.
			for _, via := range []string{"handler", "transport"} {
				ft := &fakeT{TB: t}
				var rt http.Handler = h
				if via == "handler" {
					rt = v.Handler(ft, h)
				}
				ts := httptest.NewServer(rt)
				client := ts.Client()
				if via == "transport" {
					client.Transport = v.Transport(ft, client.Transport)
				}
				req, _ := http.NewRequest(c.method, ts.URL+c.target, strings.NewReader(c.reqBody))
				if c.reqBody != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				ts.Close()
				got := strings.Join(ft.errs, "\n")
				switch {
				case c.want == "" && got != "":
					t.Errorf("%s: complained: %s", via, got)
				case c.want != "" && !strings.Contains(got, c.want):
					t.Errorf("%s: want a complaint naming %q, got %q", via, c.want, got)
				}
			}
		})
	}
}
