package emailtrack

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse: any string a stranger puts in /t/o/ or /t/c/ is refused or
// is exactly a token the signer made — one spelling per token — and a
// click's URL is always one Trackable accepts (issue 35 item 2).
func FuzzParse(f *testing.F) {
	s, err := NewSigner(testSecret)
	if err != nil {
		f.Fatal(err)
	}
	exp := testNow.Add(time.Hour)
	f.Add(s.Token(Claims{Kind: Click, MessageID: "n1.7", URL: "https://shop.example/p?x=1", Expires: exp}))
	f.Add(s.Token(Claims{Kind: Open, MessageID: "n1.7", Expires: exp}))
	f.Add("t1..")
	f.Add("t1.AA.AA")
	f.Fuzz(func(t *testing.T, token string) {
		for _, k := range []Kind{Open, Click} {
			c, err := s.Parse(token, k, testNow)
			if err != nil {
				continue
			}
			if again := s.Token(c); again != token {
				t.Fatalf("%q parses to %+v, which is written %q", token, c, again)
			}
			if k == Click && !Trackable(c.URL) || k == Open && c.URL != "" {
				t.Fatalf("%q gave kind %s URL %q", token, k, c.URL)
			}
		}
	})
}

// FuzzRewrite: whatever HTML a trigger carries, the rewrite ends, keeps
// every byte it does not rewrite when nothing is trackable, and adds the
// pixel once.
func FuzzRewrite(f *testing.F) {
	f.Add(`<html><body><a href="https://a.example/?x=1&amp;y">x</a></body></html>`)
	f.Add(`<a href='https://a.example'><area href=https://b.example>`)
	f.Add(`<p>plain</p><!-- <a href="https://c.example"> -->`)
	f.Add(`<svg><a xlink:href="https://d.example">x</a></svg><script>"</body>"</script>`)
	f.Fuzz(func(t *testing.T, src string) {
		n := 0
		got := Rewrite(src, func(string) string { n++; return "https://herald.test/t/c/T" }, "https://herald.test/t/o/P")
		if c := strings.Count(got, "https://herald.test/t/o/P"); c != strings.Count(src, "https://herald.test/t/o/P")+1 {
			t.Fatalf("the pixel is there %d times in %q", c, got)
		}
		if n == 0 && strings.Replace(got, pixelTag("https://herald.test/t/o/P"), "", 1) != src {
			t.Fatalf("nothing trackable, yet %q became %q", src, got)
		}
	})
}
