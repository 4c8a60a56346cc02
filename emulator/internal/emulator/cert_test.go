package emulator

import (
	"crypto/x509"
	"net"
	"slices"
	"testing"
)

func TestSelfSignedCert(t *testing.T) {
	t.Parallel()
	cert, err := SelfSignedCert("Test", []string{"", "10.0.0.7", "mailhog.internal"})
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf
	if leaf.Subject.CommonName != "Herald Test emulator" {
		t.Errorf("CommonName %q", leaf.Subject.CommonName)
	}
	if !slices.Equal(leaf.DNSNames, []string{"localhost", "mailhog.internal"}) {
		t.Errorf("DNSNames %v", leaf.DNSNames)
	}
	if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.IPv4(10, 0, 0, 7)) }) {
		t.Errorf("IPAddresses %v lack 10.0.0.7", leaf.IPAddresses)
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1", "mailhog.internal"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: CertPool(cert)}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(CertPEM(cert)) {
		t.Error("CertPEM is not a PEM certificate")
	}
	if _, err := SelfSignedCert("Test", []string{"bad host"}); err == nil {
		t.Error("a host with a space was accepted")
	}
}
