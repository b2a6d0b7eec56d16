package archrules

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/airside/airside"

// modulePackages lists every package directory of the module with its direct
// imports (production and test files alike).
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data" || name == "node_modules") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, build.ImportComment)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
		pkgs[filepath.ToSlash(rel)] = imports
		return nil
	})
	if err != nil {
		t.Fatalf("walk module: %v", err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s: the walk is broken", len(pkgs), root)
	}
	return pkgs
}

func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestImportRules fails when a package imports across the lines drawn in
// docs/architecture: the engine is pure, only the store speaks gorm, the
// domain knows nothing of HTTP or pages, and templates take view structs.
func TestImportRules(t *testing.T) {
	for dir, imports := range modulePackages(t) {
		for _, imp := range imports {
			switch {
			case imp == module+"/"+dir: // an external test importing its own package
			case dir == "internal/election" && !isStandard(imp):
				t.Errorf("%s imports %s: the election engine uses the standard library only", dir, imp)
			case strings.HasPrefix(imp, "gorm.io/") && dir != "internal/store" && !strings.HasPrefix(dir, "internal/store/"):
				t.Errorf("%s imports %s: only internal/store speaks gorm", dir, imp)
			case dir == "templates" && (imp == module+"/internal/store" || strings.HasPrefix(imp, "github.com/labstack/echo")):
				t.Errorf("%s imports %s: templates take view structs, never the store or echo", dir, imp)
			case strings.HasPrefix(dir, "internal/") && !strings.HasPrefix(dir, "internal/archrules") && isWebSide(imp):
				t.Errorf("%s imports %s: the domain knows nothing of HTTP, templates or sessions", dir, imp)
			}
		}
	}
}

func isWebSide(imp string) bool {
	for _, p := range []string{"github.com/labstack/echo", "github.com/a-h/templ", "github.com/gorilla/sessions",
		module + "/web", module + "/templates"} {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

// TestImportRulesCatchViolations proves the walk sees real imports: the store
// must be found importing gorm, or the rule above checks nothing.
func TestImportRulesCatchViolations(t *testing.T) {
	pkgs := modulePackages(t)
	if !slices.ContainsFunc(pkgs["internal/store"], func(s string) bool { return strings.HasPrefix(s, "gorm.io/") }) {
		t.Fatalf("internal/store is not seen importing gorm: imports %v", pkgs["internal/store"])
	}
	if _, err := os.Stat("../../internal/election"); err != nil {
		t.Fatal(err)
	}
	if _, ok := pkgs["internal/election"]; !ok {
		t.Fatal("internal/election not walked")
	}
}

// TestWebDependsOnServicesNotTheStore: the portal's HTTP side is handed
// built services (cmd/airside/wire builds them on the store); its own code
// never imports internal/store, so a handler cannot reach past a service.
// Its tests may, to set up a database.
func TestWebDependsOnServicesNotTheStore(t *testing.T) {
	for _, dir := range []string{"web", "templates"} {
		p, err := build.ImportDir(filepath.Join("../..", dir), build.ImportComment)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Imports) == 0 {
			t.Fatalf("%s: no imports seen: the check is broken", dir)
		}
		if slices.Contains(p.Imports, module+"/internal/store") {
			t.Errorf("%s imports internal/store: take the services (cmd/airside/wire) or a small read interface instead", dir)
		}
	}
}

// TestPagesAskTheProjector: every projected figure a page shows comes from
// internal/projection (one Projector, built in cmd/airside/wire), so web's
// own code never calls the preview engine or the traffic rules itself:
// two ways of projecting would be two numbers for one label.
func TestPagesAskTheProjector(t *testing.T) {
	p, err := build.ImportDir(filepath.Join("../..", "web"), build.ImportComment)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Imports, module+"/internal/projection") {
		t.Fatalf("web does not import internal/projection: the check is broken (imports %v)", p.Imports)
	}
	for _, engine := range []string{"/internal/preview", "/internal/traffic"} {
		if slices.Contains(p.Imports, module+engine) {
			t.Errorf("web imports %s: ask the Projector (internal/projection) for the figure instead", module+engine)
		}
	}
}

// TestOpenAIClientsComeFromCarrierclient: openai.NewClient reads the
// operator's OPENAI_* environment (organisation, project, custom headers)
// into every call, so a client for a carrier or a gateway is built by
// internal/carrierclient, which never reads it. Tests are exempt.
func TestOpenAIClientsComeFromCarrierclient(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if filepath.Dir(filepath.ToSlash(rel)) == "internal/carrierclient" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if strings.Contains(string(src), "openai.NewClient(") || strings.Contains(string(src), "openai.DefaultClientOptions(") {
			t.Errorf("%s builds an OpenAI client from the environment's defaults: use carrierclient.New", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files read: the walk is broken", checked)
	}
}

// TestTheStoreWritesNoInboxWords: every inbox sentence is written in a
// domain package's messages file (workflow, alerting, storefront); the
// store only persists the words it is handed. A string literal in a call
// of the store's notify helpers is a sentence with a second home.
func TestTheStoreWritesNoInboxWords(t *testing.T) {
	literal := regexp.MustCompile(`notify(Carrier|Reviewers|Users|Staff)\([^\n]*"`)
	calls := 0
	for name, src := range productionSources(t, "internal/store") {
		calls += len(regexp.MustCompile(`notify(Carrier|Reviewers|Users|Staff)\(tx`).FindAll(src, -1))
		for _, m := range literal.FindAll(src, -1) {
			t.Errorf("%s: %s: the words belong in a messages file", name, m)
		}
	}
	if calls == 0 {
		t.Fatal("no notify call seen in the store: the check is broken")
	}
}

// productionSources reads the non-test Go files of the module's dirs, by
// dir/name; it fails the test when it reads almost nothing.
func productionSources(t *testing.T, dirs ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join("../..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[dir+"/"+filepath.Base(f)] = src
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %d files read from %v: the check is broken", len(out), dirs)
	}
	return out
}

// TestPagesDoNotCheckFareBounds: the landing fee's and the discount's
// bounds are checked in internal/fare (Form.Parse, Form.Levers) and by the
// domain's own methods; a page may say them (sentences carry the
// constants) but never compares a figure against them itself.
func TestPagesDoNotCheckFareBounds(t *testing.T) {
	compare := regexp.MustCompile(`[<>]=?\s*fare\.(Min|Max)(LandingFee|Discount)\b|fare\.(Min|Max)(LandingFee|Discount)\s*[<>]`)
	for name, src := range productionSources(t, "web", "templates") {
		for _, m := range compare.FindAll(src, -1) {
			t.Errorf("%s: %s: check the bound in internal/fare", name, m)
		}
	}
}
