package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/nodetest"
	"github.com/airside/airside/internal/store"
)

// tsclientDir holds the gateway loop and its pinned npm packages.
const tsclientDir = "testdata/tsclient"

// TestTypeScriptGatewayLoop: the README's gateway loop, written against the
// client openapi-typescript 7 and openapi-fetch generate from
// docs/openapi.yaml, type-checks (tsc, strict) and runs with node against a
// live portal: a 200 with an ETag, a 304 that keeps what is held (not an
// error), a long poll answered by a publication, and the re-fetch.
func TestTypeScriptGatewayLoop(t *testing.T) {
	work := nodetest.Workdir(t, tsclientDir, "gateway-loop.ts", "tsconfig.json", "package.json")
	spec, _ := filepath.Abs("../docs/openapi.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "node", args...)
		cmd.Dir = work
		return cmd
	}
	for _, step := range [][]string{
		{"node_modules/openapi-typescript/bin/cli.js", spec, "-o", "api.d.ts"},
		{"node_modules/typescript/bin/tsc", "-p", "."},
	} {
		if out, err := node(step...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", step, err, out)
		}
	}

	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	run := node("dist/gateway-loop.js")
	run.Env = append(os.Environ(), "AIRSIDE_URL="+p.srv.URL, "AIRSIDE_TOKEN="+tok)
	run.Stderr = os.Stderr
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	type step struct {
		Step, Outcome, Etag         string
		Revision, Listings, Changed int
	}
	steps := map[string]step{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var s step
		if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
			t.Fatalf("the loop printed %q", lines.Text())
		}
		steps[s.Step] = s
		if s.Step == "ready" {
			publishOne(t, p) // the long poll waits for this
		}
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("the gateway loop failed: %v (steps %+v)", err, steps)
	}
	fetch, again, changes, refetch := steps["fetch"], steps["revalidate"], steps["changes"], steps["refetch"]
	rev := fetch.Revision
	if fetch.Outcome != "replaced" || rev == 0 || fetch.Listings == 0 || fetch.Etag != `W/"`+strconv.Itoa(rev)+`"` {
		t.Errorf("first fetch %+v", fetch)
	}
	if again.Outcome != "kept" || again.Revision != rev {
		t.Errorf("revalidation %+v, want the 304 to keep revision %d", again, rev)
	}
	if changes.Revision != rev+1 || changes.Changed != 1 {
		t.Errorf("the long poll %+v, want one listing at revision %d", changes, rev+1)
	}
	if refetch.Outcome != "replaced" || refetch.Revision != rev+1 || refetch.Etag != fmt.Sprintf(`W/"%d"`, rev+1) || refetch.Listings != fetch.Listings {
		t.Errorf("the re-fetch %+v", refetch)
	}
}
