package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/web"
)

// TestEveryRoutingChangeRaisesTheRevision: each kind of change that can
// change an election raises the catalogue revision once, atomically with
// the change, wakes a long poll on another serve process, and shows in
// changes?since=. Two processes on one PostgreSQL.
func TestEveryRoutingChangeRaisesTheRevision(t *testing.T) {
	ctx := context.Background()
	tp := newTwoProcesses(t)
	stA, a, srvA, srvB, pa := tp.stA, tp.a, tp.srvA, tp.srvB, tp.portalA
	tok := apiToken(t, stA, apitoken.ScopeCatalogueRead)

	principal := func(email string) *account.Principal {
		u, err := stA.FindUserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		p, err := stA.FindPrincipal(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin, reviewer := principal("admin@airside.example"), principal("reviewer@airside.example")
	ids := listingIDs(t, stA)
	nebula, orbit := ids["nebula"], ids["orbit"]
	approve := func(filingID int64) error {
		f, err := stA.FindFiling(ctx, filingID, nil)
		if err != nil {
			return err
		}
		_, err = a.Filings.Decide(ctx, reviewer, filingID, workflow.Approve, "", f.LockVersion)
		return err
	}
	for _, test := range []struct {
		name    string
		listing int64
		change  func(listing int64) error
	}{
		{"a fare published", nebula[0], func(int64) error {
			publishOne(t, pa)
			return nil
		}},
		{"a pause published", orbit[0], func(l int64) error {
			id, err := a.FilingsForTest().SetPaused(ctx, principal("admin@orbit.example"), l, true, "maintenance")
			if err != nil {
				return err
			}
			return approve(id)
		}},
		{"a routing priority", nebula[1], func(l int64) error { return a.Filings.SetPriority(ctx, admin, l, "0.5") }},
		{"a capability verdict", nebula[1], func(l int64) error {
			rev, _ := stA.FindListing(ctx, l, nil)
			return a.Filings.VerifyCapability(ctx, reviewer, l, "tools", workflow.CapabilityVerified, "checked", rev.Revision)
		}},
		{"a delisting", orbit[1], func(l int64) error { return a.Filings.Delist(ctx, admin, l, "gone") }},
	} {
		before, err := stA.CatalogueRevision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		woken := make(chan web.CatalogueResponse, 1)
		go func() {
			r := apiCall(t, srvB.URL, "GET", fmt.Sprintf("/api/v1/catalogue/changes?since=%d&wait=60s", before), tok, "")
			var body web.CatalogueResponse
			json.Unmarshal([]byte(r.body), &body)
			woken <- body
		}()
		time.Sleep(200 * time.Millisecond)
		if err := test.change(test.listing); err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		after, _ := stA.CatalogueRevision(ctx)
		if after != before+1 {
			t.Errorf("%s: revision %d -> %d, want one step", test.name, before, after)
		}
		select {
		case got := <-woken:
			if got.Revision != before+1 || !hasListing(got, test.listing) {
				t.Errorf("%s: the other process answered revision %d with %d listings", test.name, got.Revision, len(got.Listings))
			}
		case <-time.After(45 * time.Second):
			t.Fatalf("%s: the other process's long poll was not woken", test.name)
		}
		changes := apiCall(t, srvA.URL, "GET", fmt.Sprintf("/api/v1/catalogue/changes?since=%d", before), tok, "")
		var body web.CatalogueResponse
		if err := json.Unmarshal([]byte(changes.body), &body); err != nil || !hasListing(body, test.listing) {
			t.Errorf("%s: changes?since=%d lacks listing %d: %s", test.name, before, test.listing, changes.body)
		}
	}
	// The full catalogue leaves the delisted listing out; changes carry it as
	// a removal (status delisted), so a syncing gateway drops it.
	full := apiCall(t, srvA.URL, "GET", "/api/v1/catalogue", tok, "")
	var body web.CatalogueResponse
	json.Unmarshal([]byte(full.body), &body)
	if hasListing(body, orbit[1]) {
		t.Error("the full catalogue still lists a delisted listing")
	}
}

func hasListing(c web.CatalogueResponse, id int64) bool {
	for _, l := range c.Listings {
		if l.ListingID == id {
			return true
		}
	}
	return false
}
