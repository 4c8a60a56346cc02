package twilio

import (
	"net/url"
	"testing"
)

// TestSignatureDocumentedExample checks Signature against the worked
// example of Twilio's webhook security documentation (both versions of the
// example's phone numbers that the documentation has shown).
func TestSignatureDocumentedExample(t *testing.T) {
	t.Parallel()
	const (
		token = "12345"
		u     = "https://mycompany.com/myapp.php?foo=1&bar=2"
	)
	tests := []struct {
		caller, want string
	}{
		{"+12349013030", "0/KCTR6DLpKmkAf8muzZqo1nDgQ="},
		{"+14158675310", "GvWf1cFY/Q7PnoempGyD5oXAezc="},
	}
	for _, tt := range tests {
		params := url.Values{
			"CallSid": {"CA1234567890ABCDE"}, "Caller": {tt.caller}, "Digits": {"1234"},
			"From": {tt.caller}, "To": {"+18005551212"},
		}
		if got := Signature(token, u, params); got != tt.want {
			t.Errorf("Signature(caller %s) = %s, want %s", tt.caller, got, tt.want)
		}
		if !ValidateSignature(token, u, params, tt.want) {
			t.Errorf("ValidateSignature rejects the documented signature for caller %s", tt.caller)
		}
	}
}

func TestValidateSignatureRejects(t *testing.T) {
	t.Parallel()
	const token, u = "12345", "https://herald.example/twilio/status"
	params := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}}
	sig := Signature(token, u, params)
	if !ValidateSignature(token, u, params, sig) {
		t.Fatal("own signature rejected")
	}
	tampered := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"failed"}}
	for name, ok := range map[string]bool{
		"wrong token":     ValidateSignature("54321", u, params, sig),
		"other URL":       ValidateSignature(token, u+"?x=1", params, sig),
		"tampered params": ValidateSignature(token, u, tampered, sig),
		"empty signature": ValidateSignature(token, u, params, ""),
		"empty token":     ValidateSignature("", u, params, Signature("", u, params)),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
}
