package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

func runCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestElectVectors runs every worked example through the command, as other
// programs will.
func TestElectVectors(t *testing.T) {
	files, _ := filepath.Glob("../../internal/election/testdata/vectors/*.json")
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Input    json.RawMessage `json:"input"`
				Expected struct {
					Winner     *string `json:"winner"`
					Candidates []struct {
						ID    string  `json:"id"`
						Rank  int     `json:"rank"`
						Score float64 `json:"score"`
					} `json:"candidates"`
				} `json:"expected"`
			}
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := runCmd(t, string(v.Input), "elect")
			if err != nil || stderr != "" {
				t.Fatalf("elect failed: %v %s", err, stderr)
			}
			var got struct {
				Winner     *string `json:"winner"`
				Candidates []struct {
					ID    string  `json:"id"`
					Rank  int     `json:"rank"`
					Score float64 `json:"score"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, stdout)
			}
			if *got.Winner != *v.Expected.Winner {
				t.Errorf("winner %s, want %s", *got.Winner, *v.Expected.Winner)
			}
			for i, c := range v.Expected.Candidates {
				g := got.Candidates[i]
				if g.ID != c.ID || g.Rank != c.Rank || abs(g.Score-c.Score) > 1e-9*max(1, abs(c.Score)) {
					t.Errorf("candidate %d: got %+v, want %+v", i, g, c)
				}
			}
		})
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestElectBadInput(t *testing.T) {
	for _, test := range []struct{ name, input, wantField string }{
		{"malformed JSON", `{"request":`, "malformed JSON"},
		{"unknown mode", `{"request":{"routing":"fastest"},"candidates":[]}`, "request.routing"},
		{"unknown workload", `{"request":{"workload":"batch"},"candidates":[]}`, "request.workload"},
		{"negative price", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"-1","outputPrice":"1"}}]}`, "candidates[0].fare.inputPrice"},
		{"landing fee", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","landingFee":"0.6"}}]}`, "candidates[0].fare.landingFee"},
	} {
		t.Run(test.name, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, test.input, "elect")
			if err == nil {
				t.Fatal("bad input exited 0")
			}
			if stdout != "" {
				t.Errorf("printed on stdout: %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, test.wantField) {
				t.Errorf("stderr %q, want one line naming %s", stderr, test.wantField)
			}
		})
	}
}

func TestUserAddAndSeed(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			db := storetest.URL(t, d)
			out, _, err := runCmd(t, "", "seed", "--demo", "--database", db)
			if err != nil || !strings.Contains(out, "Seeded the demo catalogue") || !strings.Contains(out, "admin@nebula.example") {
				t.Fatalf("seed: %v\n%s", err, out)
			}
			again, _, err := runCmd(t, "", "seed", "--demo", "--database", db)
			if err != nil || strings.Contains(again, "Seeded") || !strings.Contains(again, "Demo logins") {
				t.Errorf("second seed: %v\n%s", err, again)
			}
			if _, _, err := runCmd(t, "", "user", "add", "--database", db, "--email", "rev2@airside.example", "--password", "long enough pw", "--role", "reviewer"); err != nil {
				t.Errorf("add reviewer: %v", err)
			}
			if _, _, err := runCmd(t, "", "user", "add", "--database", db, "--email", "m@nebula.example", "--password", "long enough pw", "--carrier", "nebula", "--carrier-role", "member"); err != nil {
				t.Errorf("add carrier member: %v", err)
			}
			if _, _, err := runCmd(t, "", "user", "add", "--database", db, "--email", "x@example.com", "--password", "long enough pw"); err == nil {
				t.Error("user add without a role succeeded")
			}
			if _, _, err := runCmd(t, "", "user", "add", "--database", db, "--email", "y@example.com", "--password", "short", "--role", "admin"); err == nil || !strings.Contains(err.Error(), "password") {
				t.Errorf("short password: %v", err)
			}
			st, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			p, err := st.FindPrincipal(context.Background(), mustUserID(t, st, "m@nebula.example"))
			if err != nil || len(p.Memberships) != 1 || p.Memberships[0].Carrier.Slug != "nebula" {
				t.Errorf("member %+v, %v", p, err)
			}
		})
	}
}

func mustUserID(t *testing.T, st *store.Store, email string) int64 {
	u, err := st.FindUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// TestMigrateDownStepsOneDownOnTheDatabaseGiven: `migrate down` rolls back
// exactly the newest migration of the database named, says so, and leaves
// the current directory alone; a direction it does not know is refused.
func TestMigrateDownStepsOneDownOnTheDatabaseGiven(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Chdir(t.TempDir())
			url := storetest.URL(t, d)
			if _, stderr, err := runCmd(t, "", "migrate", "--database", url); err != nil {
				t.Fatalf("migrate up: %v %s", err, stderr)
			}
			st, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			top, err := st.MigrationVersion(context.Background())
			if err != nil || top < 2 {
				t.Fatalf("version after up: %d, %v", top, err)
			}
			stdout, stderr, err := runCmd(t, "", "migrate", "down", "--database", url)
			if err != nil {
				t.Fatalf("migrate down: %v %s", err, stderr)
			}
			if got, _ := st.MigrationVersion(context.Background()); got != top-1 {
				t.Errorf("version after down: %d, want %d", got, top-1)
			}
			if !strings.Contains(stdout, "rolled back migration") {
				t.Errorf("migrate down said %q", stdout)
			}
			if _, err := os.Stat("data"); !os.IsNotExist(err) {
				t.Errorf("migrate down touched ./data: %v", err)
			}
			// The flags first, the direction after, as people also type it.
			if _, stderr, err := runCmd(t, "", "migrate", "--database", url, "up"); err != nil {
				t.Fatalf("migrate up after the flags: %v %s", err, stderr)
			}
			if got, _ := st.MigrationVersion(context.Background()); got != top {
				t.Errorf("version after up again: %d, want %d", got, top)
			}
			if _, stderr, err := runCmd(t, "", "migrate", "sideways", "--database", url); err == nil || !strings.Contains(stderr, "unknown direction") {
				t.Errorf("migrate sideways: %v %q, want refused", err, stderr)
			}
		})
	}
}

// TestSecondServeOnOneSQLiteFileIsRefused: the file lock says which process
// serves a SQLite file; a second is told to use PostgreSQL, and the lock is
// free again once the first lets go.
func TestSecondServeOnOneSQLiteFileIsRefused(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	release, err := st.HoldSQLiteFile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.HoldSQLiteFile(); err == nil || !strings.Contains(err.Error(), "use PostgreSQL") {
		t.Fatalf("second hold: %v, want a refusal naming PostgreSQL", err)
	}
	release()
	again, err := st.HoldSQLiteFile()
	if err != nil {
		t.Fatalf("hold after release: %v", err)
	}
	again()
}

// TestBackupAndRestoreCommands: the commands a person types, on SQLite:
// backup writes a file, restore refuses while a serve holds the file and
// replaces it otherwise.
func TestBackupAndRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	url := "sqlite:" + filepath.Join(dir, "airside.db")
	if _, stderr, err := runCmd(t, "", "migrate", "--database", url); err != nil {
		t.Fatalf("migrate: %v %s", err, stderr)
	}
	backup := filepath.Join(dir, "backup.db")
	if out, stderr, err := runCmd(t, "", "backup", "--to", backup, "--database", url); err != nil || !strings.Contains(out, "secret key") {
		t.Fatalf("backup: %v %q %s", err, out, stderr)
	}
	if _, _, err := runCmd(t, "", "backup", "--database", url); err == nil {
		t.Error("backup without --to was accepted")
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	release, err := st.HoldSQLiteFile() // as serve does
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, "", "restore", "--from", backup, "--database", url); err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Errorf("restore under a serving process: %v, want refused", err)
	}
	release()
	st.Close()
	if _, stderr, err := runCmd(t, "", "restore", "--from", backup, "--database", url); err != nil {
		t.Fatalf("restore: %v %s", err, stderr)
	}
	if out, _, err := runCmd(t, "", "migrate", "status", "--database", url); err != nil || !strings.Contains(out, "version") {
		t.Errorf("the restored database: %v %q", err, out)
	}
}
