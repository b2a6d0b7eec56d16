package demo

import (
	"context"
	"net/http"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestTwoDemosProbeOnlyTheirOwnCarriers: two demos on one machine each get
// their carriers on ports of their own, and each demo's listings point at
// its own carriers; a restart (new ports) moves the seed endpoints there.
func TestTwoDemosProbeOnlyTheirOwnCarriers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logf := func(format string, args ...any) { t.Errorf(format, args...) }
	first, second := StartCarriers(ctx, logf), StartCarriers(ctx, logf)
	if len(first) != len(demoCarriers) || len(second) != len(demoCarriers) {
		t.Fatalf("carriers started: %d and %d, want %d each", len(first), len(second), len(demoCarriers))
	}
	for slug, url := range first {
		if second[slug] == url {
			t.Errorf("both demos serve %s at %s", slug, url)
		}
		res, err := http.Get(url + "/models")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized { // it answers, and wants its key
			t.Errorf("%s at %s: status %d", slug, url, res.StatusCode)
		}
	}
	st := storetest.Open(t, store.SQLite)
	if _, err := Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	key, err := secret.ParseKey(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	endpoints := func(urls map[string]string) {
		t.Helper()
		if _, err := SeedEndpoints(ctx, st, box, urls); err != nil {
			t.Fatal(err)
		}
		ls, err := st.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.Endpoint == nil {
				t.Fatalf("%s/%s has no endpoint", l.CarrierSlug, l.Model.Slug)
			}
			if l.Endpoint.BaseURL != urls[l.CarrierSlug] {
				t.Errorf("%s/%s points at %s, want its own carrier at %s", l.CarrierSlug, l.Model.Slug, l.Endpoint.BaseURL, urls[l.CarrierSlug])
			}
		}
	}
	endpoints(first)
	endpoints(second) // the same database started again: the carriers moved
}
