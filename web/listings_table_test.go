package web_test

import (
	"context"
	"fmt"
	"net/http"
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
}
