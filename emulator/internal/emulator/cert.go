package emulator

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// SelfSignedCert makes the TLS certificate of the emulator called name
// ("APNs", "SMTP"): a P-256 key (generated in about a millisecond) and a
// certificate for localhost, the loopback addresses and hosts (IP addresses
// or DNS names; empty ones are skipped). It is its own CA, so trusting it
// is one CertPool or AppendCertsFromPEM. Its Leaf is set.
func SelfSignedCert(name string, hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating the TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating a serial number: %w", err)
	}
	// The certificate is checked by TLS against the real clock, never an
	// emulator's (possibly fake) one. A year stays within what Apple's
	// platforms accept from any CA (825 days).
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Herald " + name + " emulator", Organization: []string{"Herald"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		switch ip := net.ParseIP(h); {
		case h == "":
		case ip != nil:
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		case validHostname(h):
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		default:
			return tls.Certificate{}, fmt.Errorf("host %q is neither an IP address nor a DNS name", h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("creating the TLS certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parsing the TLS certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// CertPEM returns cert's leaf in PEM, for clients outside the process
// (curl --cacert, another language's library).
func CertPEM(cert tls.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
}

// CertPool returns a new pool trusting cert (made by SelfSignedCert).
func CertPool(cert tls.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(cert.Leaf)
	return p
}

// validHostname reports whether h can be a certificate's DNS name.
func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}
