package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/nodetest"
)

// validatorsDir holds the outside validators and their pinned packages.
const validatorsDir = "testdata/openapi-validators"

// TestOpenAPIDocumentPassesOutsideValidators: docs/openapi.yaml is read by
// two validators that are not ours (make check runs this): Redocly's
// linter with its recommended rules, and a validator against the OpenAPI
// 3.1 JSON schema. Our own tests check the document against the portal;
// these check it against the specification as other tools read it.
func TestOpenAPIDocumentPassesOutsideValidators(t *testing.T) {
	work := nodetest.Workdir(t, validatorsDir, "schema-check.mjs", "package.json")
	spec, err := filepath.Abs("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for name, args := range map[string][]string{
		"redocly lint":        {"node_modules/@redocly/cli/bin/cli.js", "lint", "--format", "stylish", spec},
		"the 3.1 JSON schema": {"schema-check.mjs", spec},
	} {
		cmd := exec.CommandContext(ctx, "node", args...)
		cmd.Dir = work
		// No telemetry, no update check: the run reads nothing but the file.
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s refuses the document: %v\n%s", name, err, out)
			continue
		}
		if strings.Contains(string(out), `"valid":false`) || strings.Contains(string(out), " error ") {
			t.Errorf("%s reports errors:\n%s", name, out)
		}
	}
}
