package web_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
)

// tsclientDir holds the gateway loop and its pinned npm packages.
const tsclientDir = "testdata/tsclient"

// tsPackages installs the pinned packages of testdata/tsclient once per
// lock file, in the user's cache (npm ci: exactly the lock's versions, from
// the npm registry), and returns the node_modules directory.
func tsPackages(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(tsclientDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "airside-tsclient", hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err == nil {
		return modules
	}
	// Install beside, then move into place: a second test run at the same
	// time finds either nothing or a whole install.
	staging, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if staging, err = os.MkdirTemp(filepath.Dir(dir), "install-"); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(staging)
	for _, f := range []string{"package.json", "package-lock.json"} {
		copyFile(t, filepath.Join(tsclientDir, f), filepath.Join(staging, f))
	}
	ci := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	ci.Dir = staging
	if out, err := ci.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	if err := os.Rename(staging, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(modules); statErr != nil { // not another run's install either
			t.Fatalf("install the TypeScript packages: %v", err)
		}
	}
	return modules
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTypeScriptGatewayLoop: the README's gateway loop, written against the
// client openapi-typescript 7 and openapi-fetch generate from
// docs/openapi.yaml, type-checks (tsc, strict) and runs with node against a
// live portal: a 200 with an ETag, a 304 that keeps what is held (not an
// error), a long poll answered by a publication, and the re-fetch.
func TestTypeScriptGatewayLoop(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required with CI=true (.ci/run installs it): %v", err)
		}
		t.Skip("node not found; set CI=true to make this a failure")
	}
	modules := tsPackages(t)
	work := t.TempDir()
	for _, f := range []string{"gateway-loop.ts", "tsconfig.json", "package.json"} {
		copyFile(t, filepath.Join(tsclientDir, f), filepath.Join(work, f))
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
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
