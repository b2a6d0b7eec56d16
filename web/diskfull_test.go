package web_test

import (
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "github.com/glebarez/go-sqlite" // the embedded default's driver, for the checkpoint

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store/storetest"
)

// TestDiskFullIsSaidPlainly puts the embedded database on a tiny filesystem
// of its own (a 16 MB tmpfs) and fills it: logins (which write a session)
// are answered 503 saying the database cannot take writes because the disk
// is full, with Retry-After, never a bare 500; /readyz says the same in one
// line; and once space is freed the same login works and readyz recovers.
// Mounting needs root, as in CI and on the dev machines here; elsewhere the
// test is skipped, and with CI=true a refused mount is a failure.
func TestDiskFullIsSaidPlainly(t *testing.T) {
	dir := tinyFilesystem(t, "16m")
	dbPath := filepath.Join(dir, "airside.db")
	p := portalOn(t, storetest.OpenURL(t, "sqlite:"+dbPath), io.Discard)
	login := func() response {
		return p.client().post("/login", "/login", url.Values{"email": {"member@nebula.example"}, "password": {demo.Password}})
	}
	wantStatus(t, "login with room to write", login(), http.StatusSeeOther)

	// Empty the write-ahead log, so the next write must grow a file, then
	// take every byte left.
	checkpoint, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	checkpoint.Close()
	filler := filepath.Join(dir, "filler")
	fill(t, filler)

	res := login()
	if res.status != http.StatusServiceUnavailable || !strings.Contains(res.body, "cannot take writes right now (disk full)") {
		t.Errorf("login on a full disk: status %d, want 503 saying the disk is full\n%.600s", res.status, res.body)
	}
	if res.header.Get("Retry-After") == "" {
		t.Error("the 503 has no Retry-After")
	}
	ready := p.client().get("/readyz")
	if ready.status != http.StatusServiceUnavailable || !strings.Contains(ready.body, "disk full") || strings.Count(ready.body, "\n") != 1 {
		t.Errorf("readyz on a full disk: %d %q, want 503 with one line naming the full disk", ready.status, ready.body)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "login once space is freed", login(), http.StatusSeeOther)
	wantStatus(t, "readyz once space is freed", p.client().get("/readyz"), http.StatusOK)
}

// tinyFilesystem mounts a tmpfs of size under a fresh folder, unmounted when
// the test ends.
func tinyFilesystem(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs (CI runs as root): %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes to path until the filesystem has no room left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				// The last partial chunk: fill the final bytes one at a time.
				for {
					if _, err := f.Write(chunk[:1]); err != nil {
						return
					}
				}
			}
			t.Fatalf("fill the disk: %v", err)
		}
	}
}
