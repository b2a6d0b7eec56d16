package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
)

// TestListingsTableSearchesFiltersSortsAndPages: the staff's table of every
// listing keeps its search, filter, sort and page in the URL.
func TestListingsTableSearchesFiltersSortsAndPages(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	nebula, _ := p.store.FindCarrierBySlug(ctx, "nebula")
	for i := range 80 {
		m, err := p.store.CreateModel(ctx, nil, catalogue.Model{Slug: fmt.Sprintf("bulk-model-%02d", i), Name: fmt.Sprintf("Bulk Model %02d", i), ContextTokens: 8192})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.store.CreateListing(ctx, nil, nebula.ID, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	rev := p.client()
	rev.login("reviewer@airside.example")
	rows := func(body string) int {
		return strings.Count(body, `data-testid="listing-`) - strings.Count(body, `data-testid="listing-filters"`) -
			strings.Count(body, `data-testid="listing-status-filter"`) - strings.Count(body, `data-testid="listing-sort"`) -
			strings.Count(body, `data-testid="listing-count"`) - strings.Count(body, `data-testid="listing-pages"`) - strings.Count(body, `data-testid="listing-status"`)
	}
	first := rev.get("/listings")
	wantStatus(t, "listings", first, http.StatusOK)
	if !strings.Contains(first.body, "1 to 100 of 106 listings") || rows(first.body) != 100 || !strings.Contains(first.body, `href="/listings?page=2"`) {
		t.Errorf("the first page: %d rows", rows(first.body))
	}
	if second := rev.get("/listings?page=2"); rows(second.body) != 6 {
		t.Errorf("the second page has %d rows, want 6", rows(second.body))
	}
	if kimi := rev.get("/listings?q=kimi"); rows(kimi.body) != 6 || !strings.Contains(kimi.body, `value="kimi"`) {
		t.Errorf("searching kimi: %d rows", rows(kimi.body))
	}
	if drafts := rev.get("/listings?status=draft"); !strings.Contains(drafts.body, "80 listings") {
		t.Error("the draft filter does not find the 80 drafts")
	}
	sorted := rev.get("/listings?status=in_service&sort=price").body
	if !strings.Contains(sorted, `class="active" aria-current="page">input price`) {
		t.Error("the sort is not kept")
	}
	// The page reads in full only its rows: the sorts are on every listing.
	byPrice := tableRows(sorted)
	if len(byPrice) != 26 {
		t.Fatalf("%d listings in service, want the demo's 26", len(byPrice))
	}
	for i := 1; i < len(byPrice); i++ {
		a, _ := p.store.FindListing(ctx, byPrice[i-1].id, nil)
		b, _ := p.store.FindListing(ctx, byPrice[i].id, nil)
		if a.Published.Input > b.Published.Input {
			t.Errorf("by price: %s before %s", a.Published.Input, b.Published.Input)
		}
	}
	byUptime := tableRows(rev.get("/listings?sort=uptime&page=2").body)
	if len(byUptime) != 6 {
		t.Fatalf("the second page by uptime has %d rows", len(byUptime))
	}
	last := -1.0
	for _, r := range byUptime { // model, carrier, status, 5 prices, uptime
		uptime, err := strconv.ParseFloat(strings.TrimSuffix(r.cells[8], " %"), 64)
		if err != nil || uptime < last {
			t.Errorf("by uptime, page 2: %q after %.2f", r.cells[8], last)
		}
		last = uptime
	}
}

type tableRow struct {
	id    int64
	cells []string
}

// tableRows reads the listings table: each row's listing and cell texts.
func tableRows(body string) []tableRow {
	var out []tableRow
	for _, m := range regexp.MustCompile(`(?s)<tr data-testid="listing-[^"]*">(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
		var r tableRow
		if id := regexp.MustCompile(`href="/listings/(\d+)"`).FindStringSubmatch(m[1]); id != nil {
			r.id, _ = strconv.ParseInt(id[1], 10, 64)
		}
		for _, cell := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(m[1], -1) {
			r.cells = append(r.cells, strings.TrimSpace(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(cell[1], "")))
		}
		out = append(out, r)
	}
	return out
}
