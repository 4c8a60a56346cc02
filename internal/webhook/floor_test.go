package webhook

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/cputime"
)

// benchMessage is a delivery.finished message of the bench's size.
func benchMessage() heraldtype.WebhookMessage {
	return heraldtype.WebhookMessage{EndpointID: "wh_bench", EventID: "evt_01JABCDEFGHJKMNPQRSTVWXYZ",
		Type: heraldtype.WebhookDeliveryFinished, OrderingKey: "01JABCDEFGHJKMNPQRSTVWXYZ",
		Data: json.RawMessage(`{"delivery_id":123456,"notification_id":"01JABCDEFGHJKMNPQRSTVWXYZ","user_id":"user-1234",` +
			`"notification_type":"order_shipped","channel":"push","state":"sent","attempt":1,"error_code":""}`),
		OccurredAt: time.Now()}
}

// BenchmarkMessageFloor is what one webhook message costs at least on
// this machine, both ends counted (the receiver of `herald bench
// --webhooks` shares its CPUs): one loopback request of a message's size
// with Go's net/http at both ends and a handler that only drains the body,
// over HTTP/1.1, HTTP/1.1 with TLS, HTTP/2 with TLS and HTTP/2 without
// (issue 35 item 5; docs/PERFORMANCE.md, "the budget against its floor").
// "send" is webhook.Send over HTTP/1.1 to the same handler: the body, the
// signature and the headers on top of the floor.
func BenchmarkMessageFloor(b *testing.B) {
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	m := benchMessage()
	body, err := Body(m)
	if err != nil {
		b.Fatal(err)
	}
	secret, err := NewSecret()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		tls, h2c bool
		http2    bool
		viaSend  bool
	}{
		{name: "http1"}, {name: "http1-tls", tls: true}, {name: "http2-tls", tls: true, http2: true},
		{name: "http2-cleartext", h2c: true}, {name: "send", viaSend: true},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(drain)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // a handshake cut by Close
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256 // as the outbound client's pool
			switch {
			case c.tls:
				srv.EnableHTTP2 = c.http2
				srv.StartTLS()
				tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
				tr.ForceAttemptHTTP2 = c.http2
				if !c.http2 {
					tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
				}
			case c.h2c:
				p := new(http.Protocols)
				p.SetUnencryptedHTTP2(true)
				srv.Config.Protocols = p
				srv.Start()
				tr.Protocols = p
			default:
				srv.Start()
			}
			b.Cleanup(srv.Close)
			b.Cleanup(tr.CloseIdleConnections)
			hc := &http.Client{Transport: tr}
			target := Target{URL: srv.URL + "/hooks", Secrets: []string{secret}}
			b.ReportAllocs()
			b.SetParallelism(25) // 50 in flight on 2 CPUs: the dispatcher's per-endpoint cap
			defer cputime.Report(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if c.viaSend {
						if a := Send(b.Context(), hc, target, m, time.Now, DefaultTimeout); a.Err != nil {
							b.Error(a.Err)
							return
						}
						continue
					}
					req, err := http.NewRequest(http.MethodPost, target.URL, bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					req.Header.Set("Content-Type", "application/json")
					resp, err := hc.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusNoContent || (c.http2 || c.h2c) != (resp.ProtoMajor == 2) {
						b.Errorf("status %d over %s", resp.StatusCode, resp.Proto)
						return
					}
				}
			})
		})
	}
}
