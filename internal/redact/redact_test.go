package redact_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/redact"
)

// Every form a PostgreSQL or Redis DSN can carry a password in is masked,
// and what is not a secret is kept for the operator (issue 18).
func TestDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:s3cret@db.example:5432/herald?sslmode=require":  "postgres://u:xxxxx@db.example:5432/herald?sslmode=require",
		"postgresql://u@h/db?sslmode=disable&password=s3cret":         "postgresql://u@h/db?sslmode=disable&password=xxxxx",
		"postgres://u:s3cret@h/db?PassWord=s3cret&sslpassword=s3cret": "postgres://u:xxxxx@h/db?PassWord=xxxxx&sslpassword=xxxxx",
		"postgres://u@h/db?pass%77ord=s3cret":                         "postgres://u@h/db?password=xxxxx",
		"postgres://u:s3cret%zz@h/db":                                 "postgres://(unparsable URL, not shown)",
		"postgres://u@h/db":                                           "postgres://u@h/db",
		"redis://:s3cret@127.0.0.1:6379/0":                            "redis://:xxxxx@127.0.0.1:6379/0",
		"redis://127.0.0.1:6379/0":                                    "redis://127.0.0.1:6379/0",
		"host=h user=u password=s3cret dbname=d":                      "host=h user=u password=xxxxx dbname=d",
		"host=h password = 's3 cr\\'et' dbname=d":                     "host=h password = xxxxx dbname=d",
		"password=s3cret":                                             "password=xxxxx",
		"host=h sslpassword=s3cret\tpassword=s3cret":                  "host=h sslpassword=xxxxx\tpassword=xxxxx",
		"host=h password='s3cret":                                     "(unparsable connection string, not shown)",
		"host=h s3cret":                                               "(unparsable connection string, not shown)",
		"herald.db":                                                   "herald.db",
		"sqlite:/var/lib/herald/herald.db":                            "sqlite:/var/lib/herald/herald.db",
		"":                                                            "",
	} {
		got := redact.DSN(in)
		if got != want {
			t.Errorf("DSN(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3") {
			t.Errorf("DSN(%q) = %q shows the password", in, got)
		}
	}
}

// Issue 31 item 6: an endpoint's query values and password are masked in
// logs and last_error; its scheme, host, path and parameter names stay.
func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://crm.example/audience?token=s3cret&page=2": "https://crm.example/audience?token=xxxxx&page=xxxxx",
		"https://crm.example/a?s3cret":                     "https://crm.example/a?xxxxx",
		"https://u:s3cret@crm.example/a#s3cret":            "https://u:xxxxx@crm.example/a",
		"https://crm.example/a?x=1&&y":                     "https://crm.example/a?x=xxxxx&&xxxxx",
		"https://crm.example/a":                            "https://crm.example/a",
		"http://10.0.0.5:8080/users":                       "http://10.0.0.5:8080/users",
		"https://crm.example/%zz?s3cret":                   "(unparsable URL, not shown)",
	} {
		got := redact.URL(in)
		if got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3") {
			t.Errorf("URL(%q) = %q shows the secret", in, got)
		}
	}
}
