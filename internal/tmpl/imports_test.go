package tmpl

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryRenderGoesThroughTmpl: no package but this one imports
// text/template, so every template an operator writes — a rule's, a
// campaign's, a type's (internal/message, whose e-mail HTML is this
// package's html/template mode, issue 37) — renders under a budget (issue
// 31 item 1). html/template is allowed only for pages whose template is
// Herald's own, listed here: the unsubscribe page, the e-mail tracking
// links' refusal pages (issue 35 item 2), and the operator
// console, whose templates are embedded files of its package (issue 34) —
// it shows what operators wrote as data, never runs it as a template.
func TestEveryRenderGoesThroughTmpl(t *testing.T) {
	ownPages := map[string]bool{"httpapi/unsubscribe.go": true, "httpapi/emailtrack.go": true}
	ownPackages := []string{"console/"}
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "compat" || rel == filepath.Join("internal", "tmpl") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == "text/template":
				t.Errorf("%s imports text/template: render through internal/tmpl, under a budget", rel)
			case p == "html/template" && !ownPages[filepath.ToSlash(rel)] && !hasAnyPrefix(filepath.ToSlash(rel), ownPackages):
				t.Errorf("%s imports html/template: render an operator's template through internal/tmpl", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("looked at %d files: the walk did not find the module", files)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) && !strings.Contains(s[len(p):], "/") {
			return true
		}
	}
	return false
}
