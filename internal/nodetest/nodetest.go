// Package nodetest runs Node programs in tests: it installs a testdata
// folder's pinned npm packages once per lock file and finds node, failing
// when CI=true asks for every test to run (.ci/run installs node and npm).
package nodetest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Require skips the test when node or npm is missing, or fails it with
// CI=true.
func Require(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required with CI=true (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("%s not found; set CI=true to make this a failure", tool)
		}
	}
}

// Packages installs the pinned packages of dir (its package.json and
// package-lock.json) once per lock file, in the user's cache (npm ci:
// exactly the lock's versions, from the npm registry), and returns the
// node_modules directory.
func Packages(t testing.TB, dir string) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	into := filepath.Join(cache, "airside-node", hex.EncodeToString(sum[:8]))
	modules := filepath.Join(into, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err == nil {
		return modules
	}
	if err := os.MkdirAll(filepath.Dir(into), 0o755); err != nil {
		t.Fatal(err)
	}
	// Install beside, then move into place: a second test run at the same
	// time finds either nothing or a whole install.
	staging, err := os.MkdirTemp(filepath.Dir(into), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(staging)
	for _, f := range []string{"package.json", "package-lock.json"} {
		CopyFile(t, filepath.Join(dir, f), filepath.Join(staging, f))
	}
	ci := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	ci.Dir = staging
	if out, err := ci.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.Rename(staging, into); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(modules); statErr != nil { // not another run's install either
			t.Fatalf("install the npm packages of %s: %v", dir, err)
		}
	}
	return modules
}

// Workdir is a fresh directory for a test's Node program: node and npm
// required (Require), dir's pinned packages installed (Packages) and linked
// as its node_modules, and the named files of dir copied in.
func Workdir(t testing.TB, dir string, files ...string) string {
	t.Helper()
	Require(t)
	modules := Packages(t, dir)
	work := t.TempDir()
	for _, f := range files {
		CopyFile(t, filepath.Join(dir, f), filepath.Join(work, f))
	}
	if err := os.Symlink(modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return work
}

// CopyFile copies a file for a test.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
