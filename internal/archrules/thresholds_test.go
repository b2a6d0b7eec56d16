package archrules

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// thresholdHomes are the files allowed to write the routing thresholds as
// numbers: their one home, where every sentence about them is built.
var thresholdHomes = map[string]bool{
	"internal/election/ballot.go":     true, // the landing fee's baseline and bounds, the discount's bound
	"internal/election/thresholds.go": true, // the uptime lines and the sentences
	"internal/election/solve.go":      true, // the incumbent margin
}

// thresholdLiteral matches a threshold written by hand: the uptime lines as
// text or in a comparison, the incumbent margin, the baseline in the
// routing formula, the landing fee's range.
var thresholdLiteral = regexp.MustCompile(`\b(95|85) %|[<>]=? ?(0\.)?(95|85)\b|more than 0\.15\b|[<>]=? ?0\.15\b|1 \+ 0\.20|\b5 ?(%|-) ?(to )?50 ?%|baseline 20 ?%`)

// TestThresholdsHaveOneHome fails when code or a page states a routing
// threshold as a literal instead of building it from its constant, so that
// changing the baseline, a bound, an uptime line or the margin changes
// every sentence a person reads about it. Comments may name the numbers.
func TestThresholdsHaveOneHome(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data" || name == "static" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !(strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".templ")) || strings.HasSuffix(rel, "_test.go") ||
			strings.HasSuffix(rel, "_templ.go") || strings.HasSuffix(rel, ".gen.go") || thresholdHomes[rel] ||
			strings.HasPrefix(rel, "cmd/airside-") || strings.HasPrefix(rel, "internal/archrules/") {
			return nil
		}
		scanned++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "//") {
				continue
			}
			if code, _, found := strings.Cut(line, " // "); found {
				line = code
			}
			if m := thresholdLiteral.FindString(line); m != "" {
				t.Errorf("%s:%d writes %q: build it from its constant (internal/election/thresholds.go)", rel, n, m)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files: the walk is broken", scanned)
	}
}

// TestThresholdLiteralCatchesHandWrittenNumbers keeps the pattern honest.
func TestThresholdLiteralCatchesHandWrittenNumbers(t *testing.T) {
	for _, bad := range []string{"uptime under 95 %", "if up < 0.85 {", "leads it by more than 0.15", "(1 + 0.20 - landing fee)",
		"from 5 % to 50 %", "5-50 %", "the baseline 20 % leaves", "if *u < 95 {"} {
		if !thresholdLiteral.MatchString(bad) {
			t.Errorf("not caught: %q", bad)
		}
	}
	for _, fine := range []string{"0.85 + 0.3*rng.Float64()", "down more than 30 %", "p95", "1995 %"} {
		if thresholdLiteral.MatchString(fine) {
			t.Errorf("caught by mistake: %q", fine)
		}
	}
}
