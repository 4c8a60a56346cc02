// Command cldrgen writes internal/message's date table (cldr_dates.go) from
// Unicode CLDR's JSON: the gregorian calendar of every "modern" locale
// (cldr-dates-modern), its default numbering system (cldr-numbers-modern)
// and the digits and day-period rules (cldr-core). It is run by go generate
// in internal/message:
//
//	go generate ./internal/message
//
// which fetches the three npm packages of one CLDR version with `npm pack`
// (or reads them from -src, a folder holding the .tgz files) and writes only
// what the date function uses. A locale whose data equals what its parent
// chain (golang.org/x/text's language.Tag.Parent, the chain the templates'
// locales take) already gives is left out, and every modern locale is
// checked to read back its own data before the file is written.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/text/language"
)

func main() {
	version := flag.String("version", "45.0.0", "the CLDR version: of the npm packages cldr-core, cldr-dates-modern and cldr-numbers-modern")
	src := flag.String("src", "", "a folder holding the three packages' .tgz files (npm pack's names); fetched with npm pack when empty")
	out := flag.String("out", "cldr_dates.go", "the Go file to write")
	flag.Parse()
	if err := run(*version, *src, *out); err != nil {
		log.Fatal(err)
	}
}

// packages are the npm packages read, by the short name used below.
var packages = map[string]string{"core": "cldr-core", "dates": "cldr-dates-modern", "numbers": "cldr-numbers-modern"}

func run(version, src, out string) error {
	if src == "" {
		dir, err := os.MkdirTemp("", "cldrgen")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		for _, p := range packages {
			cmd := exec.Command("npm", "pack", "--silent", p+"@"+version)
			cmd.Dir, cmd.Stderr = dir, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("npm pack %s@%s: %w", p, version, err)
			}
		}
		src = dir
	}
	files := map[string]map[string][]byte{}
	for short, p := range packages {
		f, err := readTgz(filepath.Join(src, p+"-"+version+".tgz"))
		if err != nil {
			return err
		}
		files[short] = f
	}
	d := &data{files: files}
	locales, err := d.build()
	if err != nil {
		return err
	}
	licence := string(files["core"]["package/LICENSE"])
	code, err := render(version, licence, locales)
	if err != nil {
		return err
	}
	return os.WriteFile(out, code, 0o644)
}

func readTgz(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		name := h.Name
		if !strings.HasSuffix(name, ".json") && name != "package/LICENSE" {
			continue
		}
		if strings.HasPrefix(name, "package/main/") && !strings.HasSuffix(name, "/ca-gregorian.json") && !strings.HasSuffix(name, "/numbers.json") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
}

type data struct {
	files map[string]map[string][]byte
}

func (d *data) json(pkg, name string, v any) error {
	b, ok := d.files[pkg][name]
	if !ok {
		return fmt.Errorf("%s: no %s", packages[pkg], name)
	}
	return json.Unmarshal(b, v)
}

// entry is one locale's row, in the order of message.cldrLocale's fields.
type entry [16]string

const (
	fDateFull = iota
	fDateLong
	fDateMedium
	fDateShort
	fTimeShort
	fJoinLong
	fMonths
	fMonthsAbbr
	fDays
	fDaysAbbr
	fDaysStandalone
	fAM
	fPM
	fEra
	fFlexible
	fDigits
)

var dayKeys = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

type gregorian struct {
	Months struct {
		Format struct {
			Abbreviated map[string]string `json:"abbreviated"`
			Wide        map[string]string `json:"wide"`
		} `json:"format"`
	} `json:"months"`
	Days struct {
		Format struct {
			Abbreviated map[string]string `json:"abbreviated"`
			Wide        map[string]string `json:"wide"`
		} `json:"format"`
		StandAlone struct {
			Wide map[string]string `json:"wide"`
		} `json:"stand-alone"`
	} `json:"days"`
	DayPeriods struct {
		Format struct {
			Abbreviated map[string]string `json:"abbreviated"`
			Wide        map[string]string `json:"wide"`
		} `json:"format"`
	} `json:"dayPeriods"`
	Eras struct {
		Abbr map[string]string `json:"eraAbbr"`
	} `json:"eras"`
	DateFormats     map[string]any               `json:"dateFormats"`
	TimeFormats     map[string]any               `json:"timeFormats"`
	DateTimeFormats map[string]any               `json:"dateTimeFormats"`
	AtTime          map[string]map[string]string `json:"dateTimeFormats-atTime"`
}

type rule struct {
	At     string `json:"_at"`
	From   string `json:"_from"`
	Before string `json:"_before"`
}

func (d *data) build() (map[string]entry, error) {
	var avail struct {
		AvailableLocales struct {
			Modern []string `json:"modern"`
		} `json:"availableLocales"`
	}
	if err := d.json("core", "package/availableLocales.json", &avail); err != nil {
		return nil, err
	}
	var numSys struct {
		Supplemental struct {
			NumberingSystems map[string]struct {
				Digits string `json:"_digits"`
				Type   string `json:"_type"`
			} `json:"numberingSystems"`
		} `json:"supplemental"`
	}
	if err := d.json("core", "package/supplemental/numberingSystems.json", &numSys); err != nil {
		return nil, err
	}
	var periods struct {
		Supplemental struct {
			RuleSet map[string]map[string]rule `json:"dayPeriodRuleSet"`
		} `json:"supplemental"`
	}
	if err := d.json("core", "package/supplemental/dayPeriods.json", &periods); err != nil {
		return nil, err
	}

	all := map[string]entry{}
	for _, id := range avail.AvailableLocales.Modern {
		var cal struct {
			Main map[string]struct {
				Dates struct {
					Calendars struct {
						Gregorian gregorian `json:"gregorian"`
					} `json:"calendars"`
				} `json:"dates"`
			} `json:"main"`
		}
		if err := d.json("dates", "package/main/"+id+"/ca-gregorian.json", &cal); err != nil {
			return nil, err
		}
		var nums struct {
			Main map[string]struct {
				Numbers struct {
					Default string `json:"defaultNumberingSystem"`
				} `json:"numbers"`
			} `json:"main"`
		}
		if err := d.json("numbers", "package/main/"+id+"/numbers.json", &nums); err != nil {
			return nil, err
		}
		g := cal.Main[id].Dates.Calendars.Gregorian
		var e entry
		var err error
		for i, k := range []string{"full", "long", "medium", "short"} {
			if e[i], err = str(g.DateFormats, k); err != nil {
				return nil, fmt.Errorf("%s: dateFormats: %w", id, err)
			}
		}
		if e[fTimeShort], err = str(g.TimeFormats, "short"); err != nil {
			return nil, fmt.Errorf("%s: timeFormats: %w", id, err)
		}
		// A long date and a time join as ICU joins them: the "at time"
		// pattern when the locale has one ("{1} 'at' {0}"), else the
		// standard one.
		e[fJoinLong] = g.AtTime["standard"]["long"]
		if e[fJoinLong] == "" {
			if e[fJoinLong], err = str(g.DateTimeFormats, "long"); err != nil {
				return nil, fmt.Errorf("%s: dateTimeFormats: %w", id, err)
			}
		}
		if e[fMonths], err = list(g.Months.Format.Wide, 12, nil); err != nil {
			return nil, fmt.Errorf("%s: months: %w", id, err)
		}
		if e[fMonthsAbbr], err = list(g.Months.Format.Abbreviated, 12, nil); err != nil {
			return nil, fmt.Errorf("%s: months: %w", id, err)
		}
		if e[fDays], err = list(g.Days.Format.Wide, 7, dayKeys); err != nil {
			return nil, fmt.Errorf("%s: days: %w", id, err)
		}
		if e[fDaysAbbr], err = list(g.Days.Format.Abbreviated, 7, dayKeys); err != nil {
			return nil, fmt.Errorf("%s: days: %w", id, err)
		}
		pats := strings.Join(e[:fJoinLong+1], " ")
		fields := patternFields(pats)
		if fields['c'] {
			if e[fDaysStandalone], err = list(g.Days.StandAlone.Wide, 7, dayKeys); err != nil {
				return nil, fmt.Errorf("%s: days: %w", id, err)
			}
		}
		// The a field takes the wide name (see message's dates.go).
		e[fAM], e[fPM] = g.DayPeriods.Format.Wide["am"], g.DayPeriods.Format.Wide["pm"]
		if fields['G'] {
			e[fEra] = g.Eras.Abbr["1"]
		}
		if fields['B'] {
			if e[fFlexible], err = flexible(id, periods.Supplemental.RuleSet, g.DayPeriods.Format.Abbreviated); err != nil {
				return nil, err
			}
		}
		ns := nums.Main[id].Numbers.Default
		sys, ok := numSys.Supplemental.NumberingSystems[ns]
		if !ok || sys.Type != "numeric" || len([]rune(sys.Digits)) != 10 {
			return nil, fmt.Errorf("%s: numbering system %q has no ten digits", id, ns)
		}
		if ns != "latn" {
			e[fDigits] = sys.Digits
		}
		tag, err := language.Parse(id)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if tag.IsRoot() {
			continue // CLDR's root: a tag without a language falls back to en
		}
		all[tag.String()] = e
	}
	if _, ok := all["en"]; !ok {
		return nil, fmt.Errorf("no en, the last fallback")
	}

	// Keep a locale only when its parent chain does not already give its
	// data: parents first (the shorter tag), so each is decided against the
	// table as the runtime reads it.
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := depth(a) - depth(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	kept := map[string]entry{}
	for _, id := range ids {
		if got, ok := lookup(kept, id); ok && got == all[id] {
			continue
		}
		kept[id] = all[id]
	}
	// A kept locale's field that its parent chain gives is written as
	// inherit, so a regional row holds only what the region changes.
	stored := map[string]entry{}
	for id, e := range kept {
		// Only from a parent in the table: a language's own row spells
		// out every field, rather than inheriting en's.
		if parent, ok := lookupChain(kept, language.MustParse(id).Parent().String()); ok {
			for f := range e {
				if e[f] == parent[f] {
					e[f] = inherit
				}
			}
		}
		stored[id] = e
	}
	for id, e := range all {
		if got := resolve(stored, id); got != e {
			return nil, fmt.Errorf("%s does not read back its own data: %q, want %q", id, got, e)
		}
	}
	return stored, nil
}

// inherit marks a field a locale takes from its parent chain.
const inherit = "\x01"

// resolve is message's dateLocale: the first row of the chain (the tag,
// its parents, en), each inherited field from the next row that has it.
func resolve(table map[string]entry, id string) entry {
	var rows []entry
	for t := language.MustParse(id); !t.IsRoot(); t = t.Parent() {
		if e, ok := table[t.String()]; ok {
			rows = append(rows, e)
		}
	}
	rows = append(rows, table["en"])
	out := rows[0]
	for f := range out {
		for _, r := range rows {
			if out[f] = r[f]; r[f] != inherit {
				break
			}
		}
	}
	return out
}

func depth(id string) int {
	n := 0
	for t := language.MustParse(id); !t.IsRoot(); t = t.Parent() {
		n++
	}
	return n
}

// lookup is message's: the tag, then its parents, then en.
func lookup(table map[string]entry, id string) (entry, bool) {
	if e, ok := lookupChain(table, id); ok {
		return e, true
	}
	e, ok := table["en"]
	return e, ok
}

// lookupChain is the first row of the tag and its parents.
func lookupChain(table map[string]entry, id string) (entry, bool) {
	for t := language.MustParse(id); !t.IsRoot(); t = t.Parent() {
		if e, ok := table[t.String()]; ok {
			return e, true
		}
	}
	return entry{}, false
}

func str(m map[string]any, k string) (string, error) {
	s, ok := m[k].(string)
	if !ok || s == "" {
		return "", fmt.Errorf("no %s pattern", k)
	}
	return s, nil
}

// list joins n names with NUL: months by "1".."12", days by keys.
func list(m map[string]string, n int, keys []string) (string, error) {
	out := make([]string, n)
	for i := range n {
		k := fmt.Sprint(i + 1)
		if keys != nil {
			k = keys[i]
		}
		if m[k] == "" || strings.Contains(m[k], "\x00") {
			return "", fmt.Errorf("no name for %s, or one with a NUL", k)
		}
		out[i] = m[k]
	}
	return strings.Join(out, "\x00"), nil
}

var quoted = regexp.MustCompile(`'[^']*'`)

// patternFields are the letters the patterns use outside quotes.
func patternFields(p string) map[rune]bool {
	p = quoted.ReplaceAllString(p, "")
	fields := map[rune]bool{}
	for _, r := range p {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			fields[r] = true
		}
	}
	return fields
}

// flexible writes the B field's day periods as "HHMM-HHMM name" ranges
// (CLDR's _from/_before rules of the locale's language; _at rules, the
// instants midnight and noon, are left out as ICU leaves them out of B).
func flexible(id string, sets map[string]map[string]rule, names map[string]string) (string, error) {
	base, _ := language.MustParse(id).Base()
	rules, ok := sets[id]
	if !ok {
		rules, ok = sets[base.String()]
	}
	if !ok {
		return "", fmt.Errorf("%s: uses B but has no day-period rules", id)
	}
	var parts []string
	for name, r := range rules {
		if r.From == "" {
			continue
		}
		if names[name] == "" {
			return "", fmt.Errorf("%s: no name for day period %s", id, name)
		}
		parts = append(parts, strings.ReplaceAll(r.From, ":", "")+"-"+strings.ReplaceAll(r.Before, ":", "")+" "+names[name])
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x00"), nil
}

func render(version, licence string, locales map[string]entry) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by cldrgen from Unicode CLDR %s; DO NOT EDIT.\n//\n", version)
	fmt.Fprintf(&b, "// The data below is from Unicode CLDR %s (the npm packages cldr-core,\n", version)
	b.WriteString("// cldr-dates-modern and cldr-numbers-modern), used under the Unicode License V3:\n//\n")
	for _, line := range strings.Split(strings.TrimSpace(licence), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	b.WriteString("\npackage message\n\n")
	fmt.Fprintf(&b, "// cldrVersion is the CLDR release the table is generated from.\nconst cldrVersion = %q\n\n", version)
	b.WriteString("// cldrDates holds each modern locale whose data its parent chain does not\n// already give, in cldrLocale's field order; lists are NUL-separated,\n// months from January, days from Sunday.\n")
	b.WriteString("var cldrDates = map[string]cldrLocale{\n")
	ids := make([]string, 0, len(locales))
	for id := range locales {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := locales[id]
		q := make([]string, len(e))
		for i := range e {
			q[i] = fmt.Sprintf("%q", e[i]) // invisible marks (RLM, NBSP) as \u escapes
			if e[i] == inherit {
				q[i] = "inherit"
			}
		}
		fmt.Fprintf(&b, "%q: {%s},\n", id, strings.Join(q, ", "))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
