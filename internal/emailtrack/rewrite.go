package emailtrack

import (
	"io"
	"strings"

	"golang.org/x/net/html"
)

// Rewrite returns src, an e-mail's HTML, with the href of every <a> and
// <area> that is Trackable replaced by link(href) and, when pixel is not
// "", an open pixel — a 1×1 <img> of that URL — before </body> (at the
// end when there is none). Everything else is copied byte for byte, so
// the e-mail looks exactly as written; a tag that is rewritten is written
// again from its parsed attributes (values escaped, names lower-cased).
// An href is read as a browser reads it: entities decoded, surrounding
// whitespace trimmed. HTML cut off inside a tag keeps its last bytes, the
// pixel before them. HTML the tokenizer cannot read to its end (which a
// string never causes) is returned unchanged, untracked.
func Rewrite(src string, link func(href string) string, pixel string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	b.Grow(len(src) + 512)
	pixelDone := pixel == ""
	// consumed counts the bytes of src the tokens covered: HTML cut off
	// inside a tag ("…<a hr") ends without a token for its last bytes,
	// which are then copied as they are.
	consumed := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				return src
			}
			break
		}
		// Raw is overwritten by the calls below (the tokenizer lower-cases
		// names in place), so it is copied first.
		raw := string(z.Raw())
		consumed += len(raw)
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if (tok.Data == "a" || tok.Data == "area") && rewriteHref(&tok, link) {
				b.WriteString(tok.String())
				continue
			}
		case html.EndTagToken:
			if !pixelDone {
				if name, _ := z.TagName(); string(name) == "body" {
					b.WriteString(pixelTag(pixel))
					pixelDone = true
				}
			}
		}
		b.WriteString(raw)
	}
	if !pixelDone {
		// Before a cut-off tag, which would otherwise swallow it.
		b.WriteString(pixelTag(pixel))
	}
	if consumed < len(src) {
		b.WriteString(src[consumed:])
	}
	return b.String()
}

// rewriteHref replaces tok's first href by link's answer if it is
// Trackable, and reports whether it did.
func rewriteHref(tok *html.Token, link func(string) string) bool {
	for i, a := range tok.Attr {
		if a.Namespace != "" || a.Key != "href" {
			continue
		}
		href := strings.TrimSpace(a.Val)
		if !Trackable(href) {
			return false
		}
		tok.Attr[i].Val = link(href)
		return true
	}
	return false
}

// pixelTag is the open pixel: 1×1, no border, no alt text (a screen
// reader skips it; a client that blocks images shows nothing).
func pixelTag(src string) string {
	return `<img src="` + html.EscapeString(src) + `" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`
}
