package apitest

import (
	"bytes"
	"mime"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/routers"
)

// asJSON returns req labelled application/json when the server would read
// its body as JSON under another label: the server parses every JSON
// body as JSON whatever it is declared as, among no Content-Type,
// application/*+json, application/x-www-form-urlencoded (`curl -d`) and
// text/plain (fetch() with a string body) (httpapi's checkContentType). The document names
// application/json only, which is what a client should send; a request
// so labelled is checked as the server reads it. A request of an
// operation that takes no JSON body (a form, an ignored body) is left
// as it is.
func asJSON(route *routers.Route, req *http.Request, body []byte) *http.Request {
	op := route.Operation
	if op.RequestBody == nil || op.RequestBody.Value == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
		return req
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return req
	}
	ct := req.Header.Get("Content-Type")
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		json := strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
		if err != nil || !json && mt != "application/x-www-form-urlencoded" && mt != "text/plain" {
			return req
		}
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}
