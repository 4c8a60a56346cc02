package apns

import (
	"strings"
	"testing"
)

func TestEmulatorWarnings(t *testing.T) {
	rec := Received{PushType: pushTypeBackground}
	if r := checkPayload([]byte(`{"aps":{"alert":"x"}}`), &rec); r != "" || len(rec.Warnings) != 2 {
		t.Errorf("background with alert: %q %v", r, rec.Warnings)
	}
	rec = Received{PushType: pushTypeAlert}
	if r := checkPayload([]byte(`{"aps":{}}`), &rec); r != "" || len(rec.Warnings) != 1 {
		t.Errorf("silent alert: %q %v", r, rec.Warnings)
	}
	rec = Received{PushType: pushTypeAlert}
	if r := checkPayload([]byte(`{"x":1}`), &rec); r != "" || len(rec.Warnings) != 1 {
		t.Errorf("no aps: %q %v", r, rec.Warnings)
	}
}

func TestEmulatorConfigErrors(t *testing.T) {
	if _, err := New(Config{Hosts: []string{"bad host"}}); err == nil {
		t.Error("a malformed host was accepted")
	}
	e, err := New(Config{Hosts: []string{"apns.test", "10.0.0.7"}})
	if err != nil {
		t.Fatal(err)
	}
	leaf := e.cert.Leaf
	if err := leaf.VerifyHostname("apns.test"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("10.0.0.7"); err != nil {
		t.Error(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Start("127.0.0.1:0"); err == nil {
		t.Error("a second Start succeeded")
	}
	if err := e.FailToken(strings.Repeat("ab", 32), TokenFault{Reason: "Nope"}); err == nil {
		t.Error("FailToken accepted an unknown reason")
	}
}
