package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/nodetest"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// tsclientDir holds the gateway loop and its pinned npm packages.
const tsclientDir = "testdata/tsclient"

// tsclientBuilt generates the TypeScript client from docs/openapi.yaml,
// type-checks the loops (tsc, strict) and returns how to run node there.
func tsclientBuilt(t *testing.T) func(args ...string) *exec.Cmd {
	t.Helper()
	work := nodetest.Workdir(t, tsclientDir, "gateway-loop.ts", "carrier-loop.ts", "tsconfig.json", "package.json")
	spec, _ := filepath.Abs("../docs/openapi.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
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
	return node
}

// startLoop starts a loop and reads its stdout line by line (its stderr
// goes to the test's).
func startLoop(t *testing.T, run *exec.Cmd) *bufio.Scanner {
	t.Helper()
	run.Stderr = os.Stderr
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	return bufio.NewScanner(stdout)
}

// TestTypeScriptGatewayLoop: the README's gateway loop, written against the
// client openapi-typescript 7 and openapi-fetch generate from
// docs/openapi.yaml, type-checks (tsc, strict) and runs with node against a
// live portal: a 200 with an ETag, a 304 that keeps what is held (not an
// error), a long poll answered by a publication, and the re-fetch.
func TestTypeScriptGatewayLoop(t *testing.T) {
	node := tsclientBuilt(t)
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	run := node("dist/gateway-loop.js")
	run.Env = append(os.Environ(), "AIRSIDE_URL="+p.srv.URL, "AIRSIDE_TOKEN="+tok)
	lines := startLoop(t, run)
	type step struct {
		Step, Outcome, Etag         string
		Revision, Listings, Changed int
	}
	steps := map[string]step{}
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

// TestTypeScriptCarrierLoop: a carrier's repricing job against the same
// generated client and a live portal: its listings with their published
// fares, a dry run (the preview's share and ranks), a filing under an
// Idempotency-Key sent twice (one filing, the second answer replayed), and
// a poll that sees the reviewer's approval, the filing named by its token.
func TestTypeScriptCarrierLoop(t *testing.T) {
	node := tsclientBuilt(t)
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	tok, name := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeFaresRead, apitoken.ScopeFaresWrite)
	mine := nebulaListing(t, p.store, "")
	input := money.Micros(int64(mine.Published.Input) * 9 / 10).String()
	run := node("dist/carrier-loop.js")
	run.Env = append(os.Environ(), "AIRSIDE_URL="+p.srv.URL, "AIRSIDE_TOKEN="+tok, fmt.Sprintf("AIRSIDE_LISTING=%d", mine.ID), "AIRSIDE_INPUT="+input)
	lines := startLoop(t, run)
	type step struct {
		Step, State, ViaToken, RoutesAt string
		Published                       *string
		Count                           int
		FilingID                        int64
		Replayed                        bool
		Share                           float64
		Ranks                           []int
	}
	steps := map[string]step{}
	for lines.Scan() {
		var s step
		if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
			t.Fatalf("the loop printed %q", lines.Text())
		}
		steps[s.Step] = s
		if s.Step == "retried" { // the job polls now: a reviewer approves
			reviewer := p.client()
			reviewer.login("reviewer@airside.example")
			page := fmt.Sprintf("/filings/%d", s.FilingID)
			wantStatus(t, "approve", reviewer.post(page, page+"/approve", url.Values{}), http.StatusSeeOther)
		}
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("the carrier loop failed: %v (steps %+v)", err, steps)
	}
	listed, dry, filed, retried, decided := steps["listings"], steps["dry-run"], steps["filed"], steps["retried"], steps["decided"]
	if listed.Count == 0 || listed.Published == nil || *listed.Published != mine.Published.Input.String() {
		t.Errorf("listings %+v, want nebula's with %s published", listed, mine.Published.Input)
	}
	if dry.Share <= 0 || len(dry.Ranks) < 4 || dry.RoutesAt == "" {
		t.Errorf("dry run %+v", dry)
	}
	if filed.FilingID == 0 || filed.State != "submitted" || filed.Replayed || retried.FilingID != filed.FilingID || !retried.Replayed {
		t.Errorf("filed %+v, retried %+v: want one filing, the retry replayed", filed, retried)
	}
	if decided.State != "published" || decided.ViaToken != name {
		t.Errorf("decided %+v, want published, via %q", decided, name)
	}
	if fs, _ := p.store.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID}); len(fs) != 1 {
		t.Errorf("%d filings for the listing, want 1", len(fs))
	}
}
