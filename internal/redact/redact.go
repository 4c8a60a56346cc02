// Package redact hides credentials in connection strings before they are
// logged, printed or wrapped into an error. It is the one place that knows
// where a password can hide in a DSN; every caller that shows a database
// or Redis address to a person goes through DSN.
package redact

import (
	"net/url"
	"strings"
)

// Mask is what a password is replaced with.
const Mask = "xxxxx"

// DSN returns dsn with every password masked, the rest left as it was so
// the operator still sees which server and database are meant. It knows
// the forms libpq and pgx accept, and Redis URLs:
//
//   - URL userinfo: postgres://user:secret@host/db, redis://:secret@host
//   - URL query:    postgres://user@host/db?password=secret (also sslpassword)
//   - keyword/value: host=h password=secret, password = 'se cret'
//
// A URL that does not parse, or keyword/value text that does not scan, is
// replaced whole: where its parts end is then unclear, so no part of it
// can be shown safely. Anything else (a SQLite path) is returned as is.
func DSN(dsn string) string {
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, " ='") {
		return redactURL(scheme, dsn)
	}
	if strings.Contains(dsn, "=") {
		return redactKeywordValue(dsn)
	}
	return dsn
}

// secretKey reports whether a connection parameter holds a password.
func secretKey(k string) bool {
	k = strings.ToLower(strings.TrimSpace(k))
	return k == "password" || k == "sslpassword"
}

func redactURL(scheme, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return scheme + "://(unparsable URL, not shown)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), Mask)
	}
	if u.RawQuery != "" {
		// Rebuilt by hand, not with url.Values.Encode, to keep the
		// parameters in their order and spelling.
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, _, _ := strings.Cut(p, "=")
			if dk, err := url.QueryUnescape(k); err == nil {
				k = dk
			}
			if secretKey(k) {
				parts[i] = url.QueryEscape(k) + "=" + Mask
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}

// redactKeywordValue masks the values of password keywords in libpq's
// "key=value key='quoted value'" form (spaces may surround =, a quoted
// value escapes ' and \ with a backslash, an unquoted one may too).
func redactKeywordValue(s string) string {
	var b strings.Builder
	i := 0
	for {
		start := i
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			b.WriteString(s[start:])
			return b.String()
		}
		keyStart := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[keyStart:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '=' || key == "" {
			return "(unparsable connection string, not shown)"
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		valStart := i
		if i < len(s) && s[i] == '\'' {
			i++
			for i < len(s) && s[i] != '\'' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return "(unparsable connection string, not shown)"
			}
			i++
		} else {
			for i < len(s) && !isSpace(s[i]) {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i > len(s) {
				i = len(s)
			}
		}
		b.WriteString(s[start:valStart])
		if secretKey(key) {
			b.WriteString(Mask)
		} else {
			b.WriteString(s[valStart:i])
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// URL returns an endpoint URL fit for a log line or an error a caller
// reads (issue 31 item 6): every query parameter's value and a
// password in the userinfo masked, the fragment dropped — a query is
// where a token or a signature rides along (?api_key=…, ?sig=…). The
// scheme, host, path and parameter names stay, so the operator still sees
// which endpoint is meant. A URL that does not parse is not shown.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL, not shown)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mask)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" || u.ForceQuery {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			switch k, _, ok := strings.Cut(p, "="); {
			case ok:
				parts[i] = k + "=" + Mask
			case p != "":
				parts[i] = Mask // a bare value ("?s3cr3t") may be the secret itself
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}
