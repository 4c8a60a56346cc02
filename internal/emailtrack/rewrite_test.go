package emailtrack

import (
	"strings"
	"testing"
)

func tracked(href string) string { return "https://herald.test/t/c/" + strings.ToUpper(href[8:9]) }

// TestRewriteLinksAndPixel: http(s) links become tracked ones, everything
// else is copied byte for byte, the pixel goes before </body>.
func TestRewriteLinksAndPixel(t *testing.T) {
	t.Parallel()
	src := `<!DOCTYPE html><HTML><body class="x"><!-- keep <a href="https://c.example"> -->
<p>Hi &amp; welcome</p><A HREF=" https://a.example/?x=1&amp;y=2 " class='btn'>Shop</A>
<a href="mailto:help@example.com">mail</a> <a href="/rel">rel</a> <a name="top">anchor</a>
<area href="https://b.example/map"><a href="{{.URL}}">tpl</a>
</body></HTML>`
	var seen []string
	got := Rewrite(src, func(href string) string {
		seen = append(seen, href)
		return tracked(href)
	}, "https://herald.test/t/o/TOKEN")
	if want := []string{"https://a.example/?x=1&y=2", "https://b.example/map"}; strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("links rewritten %q, want %q", seen, want)
	}
	for _, want := range []string{
		`<!DOCTYPE html><HTML><body class="x"><!-- keep <a href="https://c.example"> -->`,
		`<p>Hi &amp; welcome</p><a href="https://herald.test/t/c/A" class="btn">Shop</A>`,
		`<a href="mailto:help@example.com">mail</a> <a href="/rel">rel</a> <a name="top">anchor</a>`,
		`<area href="https://herald.test/t/c/B">`,
		`<a href="{{.URL}}">tpl</a>`,
		`<img src="https://herald.test/t/o/TOKEN" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0"></body></HTML>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Count(got, "/t/o/") != 1 {
		t.Errorf("the pixel is not there exactly once:\n%s", got)
	}
}

func TestRewriteWithoutBodyOrPixel(t *testing.T) {
	t.Parallel()
	if got := Rewrite(`<p>x</p>`, tracked, "https://h/t/o/T"); !strings.HasPrefix(got, `<p>x</p><img src="https://h/t/o/T"`) {
		t.Errorf("no body: %q", got)
	}
	src := `<p><a href="https://a.example">x</a></p>`
	if got := Rewrite(src, tracked, ""); got != `<p><a href="https://herald.test/t/c/A">x</a></p>` {
		t.Errorf("no pixel: %q", got)
	}
	// Cut off inside a tag (found by FuzzRewrite): the last bytes are
	// kept, the pixel before them.
	if got := Rewrite(`<p>x</p><a hr`, tracked, "P"); got != `<p>x</p>`+pixelTag("P")+`<a hr` {
		t.Errorf("cut off: %q", got)
	}
	// Not HTML at all: copied as text.
	if got := Rewrite("plain < text & more", tracked, ""); got != "plain < text & more" {
		t.Errorf("text: %q", got)
	}
}

// TestRewriteEscapesWhatItWrites: a tracked URL is written as an escaped
// attribute value, whatever it holds.
func TestRewriteEscapesWhatItWrites(t *testing.T) {
	t.Parallel()
	got := Rewrite(`<a href="https://a.example">x</a>`, func(string) string { return `https://h/t/c/"><script>` }, `https://h/"o`)
	if strings.Contains(got, "<script>") || strings.Contains(got, `"o"`) {
		t.Errorf("unescaped: %s", got)
	}
}
