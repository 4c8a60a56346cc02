package webpush

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// selfSigned returns a TLS certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webpush emulator"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// TestEmulatorTLS: served over HTTPS, the emulator needs no
// AllowInsecureEndpoints, and the VAPID audience is the https origin.
func TestEmulatorTLS(t *testing.T) {
	t.Parallel()
	cert, pool := selfSigned(t)
	e := startEmulator(t, webpushemu.Config{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if !strings.HasPrefix(e.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %q", e.URL())
	}
	cfg := testConfig(nil)
	cfg.AllowInsecureEndpoints = false
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := subscribe(e)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if got := e.MessagesTo(m.Device.Token); len(got) != 1 {
		t.Fatalf("recorded %d", len(got))
	}
	resp, err := cfg.HTTPClient.Get(e.URL() + "/emulator/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("the TLS emulator speaks %s, want HTTP/2 like real push services", resp.Proto)
	}
	// Without trusting the certificate, the failure is a temporary
	// network error, not a verdict on the device.
	cfg.HTTPClient = nil
	c, _ = New(cfg)
	if se := sendErr(t, c, m); se.Class != heraldtype.ClassTemporary || se.TokenInvalid {
		t.Errorf("untrusted certificate: %+v", se)
	}
}
