package kafka

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// Registry is an in-process schema registry that speaks the Confluent
// Schema Registry REST API (franz-go's srfake, in memory), for Avro
// topics in the Confluent wire format (issue 20 item 8). serve --dev
// starts one beside the broker.
type Registry struct {
	reg *srfake.Registry
	srv *http.Server
	url string
}

// StartRegistry serves a registry on addr (host:port; port 0 picks one).
func StartRegistry(addr string) (*Registry, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("schema registry emulator: %w", err)
	}
	r := &Registry{reg: srfake.NewRegistry(), url: "http://" + ln.Addr().String()}
	r.srv = &http.Server{Handler: r.reg.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln) //nolint:errcheck // ends with http.ErrServerClosed when Close is called
	return r, nil
}

// URL is the registry's base URL: kafka.schema_registry_url.
func (r *Registry) URL() string { return r.url }

// RegisterAvro registers an Avro schema (.avsc text) under subject and
// returns its id, as POST /subjects/{subject}/versions does.
func (r *Registry) RegisterAvro(subject, schema string) (int, error) {
	id, _, err := r.reg.RegisterSchema(subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	return id, err
}

// Close stops the registry.
func (r *Registry) Close() error { return r.srv.Close() }
