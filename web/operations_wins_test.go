package web_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/store"
)

// operationsWins are the "wins now" of each listing on an operations page,
// by listing id, unescaped.
func operationsWins(body string) map[int64]string {
	out := map[int64]string{}
	for _, m := range regexp.MustCompile(`<a href="/listings/(\d+)"><bdi>[^<]*</bdi></a></td><td>[^<]*</td><td>([^<]*)</td>`).FindAllStringSubmatch(body, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		out[id] = html.UnescapeString(m[2])
	}
	return out
}

// TestOperationsWinnersAreTheElections: "wins now" on the operations page
// (with no traffic yet, so no incumbent: internal/projection tests the
// incumbent keeping a shape within its margin)
// names, for each listing, the standard scenarios it wins: those in which
// a full election on the routing snapshot's market (the preview's ballot)
// elects it. The page elects on the snapshot's compiled ballots.
func TestOperationsWinnersAreTheElections(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	now := time.Now().UTC()
	p.store.Now = func() time.Time { return now }
	c := p.client()
	c.login("reviewer@airside.example")
	res := c.get("/operations")
	wantStatus(t, "operations", res, http.StatusOK)
	got := operationsWins(res.body)
	listings, err := p.store.FindListings(ctx, catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(listings) {
		t.Fatalf("the operations page shows %d listings of %d", len(got), len(listings))
	}
	snap, err := p.server.Routing.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byCandidate := map[string]int64{}
	models := map[string]bool{}
	for i := range listings {
		byCandidate[preview.CandidateID(&listings[i])] = listings[i].ID
		models[listings[i].Model.Slug] = true
	}
	want := map[int64][]string{}
	won := 0
	for slug := range models {
		m, ok := snap.Market(slug)
		if !ok {
			continue
		}
		for _, sc := range preview.StandardScenarios() {
			b, _ := m.Ballot(sc.Request(slug, now), preview.Change{})
			if r := election.Elect(&b); r.Winner >= 0 {
				id := byCandidate[b.Candidates[r.Winner].ID]
				want[id] = append(want[id], sc.Name)
				won++
			}
		}
	}
	if won == 0 {
		t.Fatal("no scenario elects anyone: nothing to compare")
	}
	for _, l := range listings {
		if w := strings.Join(want[l.ID], ", "); got[l.ID] != w {
			t.Errorf("%s/%s wins %q on the operations page; the elections say %q", l.CarrierSlug, l.Model.Slug, got[l.ID], w)
		}
	}
}
