package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// TestTheDemosCarriersPublishTheirFeeds: `serve --demo` has Nebula's fake
// carrier publish its provider feed (its published fares, in OpenRouter's
// format) and registers it; read from the feed page, every model of it
// maps to a Nebula listing as published, and nothing is filed.
func TestTheDemosCarriersPublishTheirFeeds(t *testing.T) {
	_, portal, _, dbURL, _ := gatewayFixture(t)
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	filings := func() int {
		fs, err := st.FindFilings(context.Background(), workflow.FilingFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(fs)
	}
	before := filings()
	admin, err := logIn(portal, "admin@nebula.example")
	if err != nil {
		t.Fatal(err)
	}
	page := "/carrier/feed?carrier=nebula"
	if path, code := submitForm(t, admin, portal, page, "/carrier/feed/read?carrier=nebula", url.Values{}); code != http.StatusOK || !strings.HasPrefix(path, "/carrier/feed") {
		t.Fatalf("read the feed: %d at %s", code, path)
	}
	res, err := admin.Get(portal + page)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(raw)
	nebula, _ := st.FindCarrierBySlug(context.Background(), "nebula")
	ls, _ := st.FindListings(context.Background(), catalogue.ListingFilter{CarrierIDs: []int64{nebula.ID}, Published: true})
	if len(ls) == 0 || strings.Contains(body, "feed-failing") || strings.Count(body, ": as published.") != len(ls) {
		t.Errorf("the demo feed's read: want %d models as published, no failure:\n%.3000s", len(ls), body)
	}
	if after := filings(); after != before {
		t.Errorf("reading the demo's own feed filed %d filings", after-before)
	}
}
