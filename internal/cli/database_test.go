package cli

import (
	"os"
	"strings"
	"testing"
)

// A libpq keyword/value connection string is refused with a message that
// hides its password, instead of becoming a SQLite file named after it —
// password included (issue 18). A SQLite path that happens to start like
// one still opens with the sqlite: prefix.
func TestKeywordDSNIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dsn := range []string{
		"host=db.internal user=herald password=s3cret-kv dbname=app",
		"  password = 's3cret-kv' host=db",
		"dbname=app sslmode=require",
	} {
		_, err := openStore(t.Context(), Config{Database: dsn})
		if err == nil || !strings.Contains(err.Error(), "keyword/value") {
			t.Errorf("%q: err %v, want the keyword/value refusal", dsn, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-kv") {
			t.Errorf("%q: the refusal shows the password: %v", dsn, err)
		}
	}
	if names, _ := os.ReadDir("."); len(names) != 0 {
		t.Fatalf("refused connection strings left files behind: %v", names)
	}
	st, err := openStore(t.Context(), Config{Database: "sqlite:host=local.db"})
	if err != nil {
		t.Fatalf("sqlite: prefix: %v", err)
	}
	st.Close()
}
