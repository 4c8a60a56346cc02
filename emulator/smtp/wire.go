package smtp

// TLS modes of Config.TLS: the same strings as the client's modes in
// provider/smtp, so one setting configures both ends.
const (
	// TLSNone serves plain text only.
	TLSNone = "none"
	// TLSStartTLS serves plain text and offers STARTTLS; AUTH only after it.
	TLSStartTLS = "starttls"
	// TLSImplicit serves TLS from the first byte.
	TLSImplicit = "tls"
)
