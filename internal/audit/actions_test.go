package audit

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryAuditedActionReadsAsASentence: every action the code records
// (an `Action: "..."` or a RecordAudit call with a literal) has its words in
// the log and a place in the filter, so none reads as a code.
func TestEveryAuditedActionReadsAsASentence(t *testing.T) {
	literal := regexp.MustCompile(`(?:Action:\s*|RecordAudit\([^,]+,[^,]+,\s*|action(?:, \w+)? :?= )"([a-z_]+(?:\.[a-z_]+)*)"`)
	found := map[string]string{}
	for _, root := range []string{"../../internal", "../../web"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
				found[m[1]] = path
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) < 20 {
		t.Fatalf("found only %d audited actions in the code; the pattern no longer matches how they are recorded", len(found))
	}
	t.Logf("%d audited actions", len(found))
	for action, path := range found {
		if _, ok := verbs[action]; !ok {
			t.Errorf("%s records %q, which has no words in the audit log", path, action)
		}
	}
}
