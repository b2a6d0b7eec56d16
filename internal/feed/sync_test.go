package feed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/workflow"
)

type memStore struct {
	feeds      map[int64]Config
	failures   int // reads recorded as newly failing
	recoveries int // reads recorded as readable again
}

func (m *memStore) FindFeed(_ context.Context, id int64) (*Config, error) {
	c, ok := m.feeds[id]
	if !ok {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "no feed")
	}
	return &c, nil
}

func (m *memStore) FindFeedsDue(_ context.Context, before time.Time) ([]Config, error) {
	var out []Config
	for _, c := range m.feeds {
		if c.CheckedAt == nil || c.CheckedAt.Before(before) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memStore) SaveFeed(_ context.Context, actor int64, c Config) error {
	c.UpdatedBy = actor
	m.feeds[c.CarrierID] = c
	return nil
}

func (m *memStore) RecordFeedRead(_ context.Context, c Config, tell string) error {
	m.feeds[c.CarrierID] = c
	switch {
	case tell != "" && c.Failing:
		m.failures++
	case tell != "":
		m.recoveries++
	}
	return nil
}

func (m *memStore) SaveFeedMapping(_ context.Context, _, id int64, mapping map[string]int64) error {
	c := m.feeds[id]
	c.Mapping, c.ETag, c.LastModified = mapping, "", ""
	m.feeds[id] = c
	return nil
}

func (m *memStore) ClaimFeedRead(_ context.Context, id int64, was *time.Time, now time.Time) (bool, error) {
	c, ok := m.feeds[id]
	if !ok || (c.CheckedAt == nil) != (was == nil) || was != nil && !c.CheckedAt.Equal(*was) {
		return false, nil
	}
	c.CheckedAt = &now
	m.feeds[id] = c
	return true, nil
}

func (m *memStore) DeleteFeed(_ context.Context, _, id int64) error { delete(m.feeds, id); return nil }

type memReads struct {
	listing catalogue.Listing
	admin   *account.Principal
}

func (r *memReads) FindListings(context.Context, catalogue.ListingFilter) ([]catalogue.Listing, error) {
	return []catalogue.Listing{r.listing}, nil
}

func (r *memReads) FindPrincipal(context.Context, int64) (*account.Principal, error) {
	return r.admin, nil
}

type memFiler struct{ filed []fare.Form }

func (f *memFiler) FileByAPI(_ context.Context, p *account.Principal, _ int64, form fare.Form, _ bool, via string, idem *workflow.Idempotency) (int64, bool, error) {
	if p.IsStaff() || via != Via || idem == nil {
		return 0, false, fmt.Errorf("filed as %+v via %q with key %v", p.User, via, idem)
	}
	f.filed = append(f.filed, form)
	return int64(len(f.filed)), false, nil
}

// TestAScheduledReadRevalidatesAndSaysAFailureOnce: the scheduled read
// sends the ETag it holds, and a 304 files nothing; a changed feed files
// once; a feed failing on two reads tells the carrier once.
func TestAScheduledReadRevalidatesAndSaysAFailureOnce(t *testing.T) {
	var prompt atomic.Value
	prompt.Store("0.0000004")
	var notModified, down atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() > 0 {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		etag := `"` + prompt.Load().(string) + `"`
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		_ = json.NewEncoder(w).Encode(Document{Data: []Model{{ID: "org/m", Pricing: Pricing{Prompt: prompt.Load().(string), Completion: "0.000002"}}}})
	}))
	defer srv.Close()
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	admin := &account.Principal{User: account.User{ID: 5, Staff: account.StaffAdmin}, Memberships: []account.Membership{{UserID: 5, CarrierID: 1, Role: account.CarrierAdmin}}}
	published := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000), LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}
	st := &memStore{feeds: map[int64]Config{}}
	filer := &memFiler{}
	s := &Syncer{Store: st, Reads: &memReads{listing: catalogue.Listing{ID: 9, CarrierID: 1, Model: catalogue.Model{Slug: "m"}, Published: published}, admin: admin},
		Filer: filer, HTTP: srv.Client(), Now: func() time.Time { return now }}
	if err := s.Register(context.Background(), admin, 1, srv.URL, true); err != nil {
		t.Fatal(err)
	}
	read := func() {
		t.Helper()
		now = now.Add(16 * time.Minute)
		if n, err := s.SyncDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("read %d feeds: %v", n, err)
		}
	}
	read()
	read()
	if len(filer.filed) != 1 || notModified.Load() != 1 || filer.filed[0].Input != "0.4" {
		t.Errorf("two reads of one feed: %d filings, %d answered 304; want 1 and 1 (input %q)", len(filer.filed), notModified.Load(), filer.filed)
	}
	prompt.Store("0.00000035")
	read()
	if len(filer.filed) != 2 || filer.filed[1].Input != "0.35" {
		t.Errorf("a changed feed: %d filings", len(filer.filed))
	}
	down.Store(1)
	read()
	read()
	if c := st.feeds[1]; !c.Failing || st.failures != 1 || len(filer.filed) != 2 {
		t.Errorf("a feed down on two reads: failing %v, told %d times (want once), %d filings", c.Failing, st.failures, len(filer.filed))
	}
	down.Store(0)
	read()
	read()
	if st.feeds[1].Failing || st.recoveries != 1 {
		t.Errorf("the feed back: failing %v, told %d times it reads again (want once)", st.feeds[1].Failing, st.recoveries)
	}
}
