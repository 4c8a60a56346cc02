package message

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// PlainText makes an e-mail's plain-text part from its rendered HTML,
// for a template that gives none: the text as a reader sees it — blocks
// and <br> as line breaks, a link's address after its text, list items
// as "- ", runs of spaces collapsed, nothing of <head>, <style> or
// <script>.
func PlainText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var out []byte
	var href []string // the open links' addresses
	skip := 0         // inside head, style, script, title
	space := false    // a space is owed before the next word
	newline := func(n int) {
		for len(out) > 0 && out[len(out)-1] == ' ' {
			out = out[:len(out)-1]
		}
		if len(out) == 0 {
			return
		}
		have := 0
		for i := len(out) - 1; i >= 0 && out[i] == '\n'; i-- {
			have++
		}
		for ; have < n; have++ {
			out = append(out, '\n')
		}
		space = false
	}
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(string(out))
		case html.TextToken:
			if skip > 0 {
				continue
			}
			text := z.Text() // once: the tokenizer hands the text out once
			for i, word := range strings.Fields(string(text)) {
				if (i > 0 || space || startsWithSpace(text)) && len(out) > 0 && out[len(out)-1] != '\n' && out[len(out)-1] != ' ' {
					out = append(out, ' ')
				}
				out = append(out, word...)
				space = false
			}
			if len(text) > 0 && isSpace(text[len(text)-1]) {
				space = true
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Head, atom.Style, atom.Script, atom.Title:
				skip++
			case atom.Br:
				newline(1)
			case atom.Li:
				newline(1)
				out = append(out, "- "...)
			case atom.A:
				link := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						link = string(v)
					}
				}
				href = append(href, link)
			default:
				if block[a] {
					newline(2)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Head, atom.Style, atom.Script, atom.Title:
				if skip > 0 {
					skip--
				}
			case atom.A:
				if n := len(href); n > 0 {
					if l := href[n-1]; l != "" && (strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:")) {
						out = append(out, " ("+l+")"...)
					}
					href = href[:n-1]
				}
			default:
				if block[a] {
					newline(2)
				}
			}
		}
	}
}

var block = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Tr: true,
	atom.Blockquote: true, atom.Hr: true, atom.Section: true, atom.Header: true, atom.Footer: true,
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f' }

func startsWithSpace(b []byte) bool { return len(b) > 0 && isSpace(b[0]) }
