package projection

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestRequestsByMinuteRereadsFromTheTouchedMinute: the minutes of an hour
// in which a fare was published, kept between batches: each read equals
// the store's, and after a batch only the minutes from the earliest one it
// touched are read again (none for a batch of a later hour).
func TestRequestsByMinuteRereadsFromTheTouchedMinute(t *testing.T) {
	ctx := context.Background()
	st, ids := twoListingsOfAModel(t)
	now := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour).Add(40 * time.Minute)
	h := now.Truncate(time.Hour)
	s := New(st, nil, func() time.Time { return now })
	record := func(source string, minutes ...int) {
		t.Helper()
		var batch []catalogue.Bucket
		for _, m := range minutes {
			for i, id := range ids {
				batch = append(batch, catalogue.Bucket{ListingID: id, Minute: h.Add(time.Duration(m) * time.Minute), Source: source, Counts: catalogue.Counts{Requests: int64(10*m + i + 1)}})
			}
		}
		if err := st.RecordBuckets(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	read := func(step string) int64 {
		t.Helper()
		before := s.PointsRead()
		got, err := s.RequestsByMinute(ctx, ids, h)
		if err != nil {
			t.Fatal(err)
		}
		byListing, err := st.RequestsByMinute(ctx, ids, h, h.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := map[time.Time]int64{}
		for _, minutes := range byListing {
			for m, n := range minutes {
				want[m] += n
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: kept minutes %v, the store's %v", step, got, want)
		}
		return s.PointsRead() - before
	}
	var first []int
	for m := range 30 {
		first = append(first, m)
	}
	record("a", first...)
	if n := read("first read"); n != 31 {
		t.Errorf("first read: %d points, want the 30 minutes and the read", n)
	}
	if n := read("nothing new"); n != 0 {
		t.Errorf("read again with nothing new: %d points", n)
	}
	record("a", 30, 31, 32)
	record("b", 12) // a late gateway: minute 12 again, from another source
	if n := read("after minutes 12 and 30-32"); n != 22 {
		t.Errorf("after a batch touching minute 12: %d points read, want minutes 12-32 and the read (22)", n)
	}
	record("a", 33)
	if n := read("after minute 33"); n != 2 {
		t.Errorf("after a batch of minute 33: %d points read, want that minute and the read", n)
	}
	record("a", 65) // the hour after
	if n := read("after a batch of the hour after"); n != 0 {
		t.Errorf("after a batch of the hour after: %d points read", n)
	}
	// The store knows the earliest minute a batch touched, not its last:
	// one that starts in the hour before may hold minutes of this one.
	record("a", -5)
	if n := read("after a batch of the hour before"); n != 35 {
		t.Errorf("after a batch from the hour before: %d points read, want the hour's 34 minutes and the read", n)
	}
}

// minuteReads counts the store's reads of minutes.
type minuteReads struct {
	*store.Store
	reads int
}

func (m *minuteReads) RequestsByMinute(ctx context.Context, ids []int64, since, until time.Time) (map[int64]map[time.Time]int64, error) {
	m.reads++
	return m.Store.RequestsByMinute(ctx, ids, since, until)
}

// TestMinutesOfSeveralModelsAndHoursAreOneRead: the minutes of several
// models' hours are read in one query, each model's hour summing its own
// listings alone; read again with nothing new, none; after a batch of the
// later hour, one read, and the earlier hour is kept.
func TestMinutesOfSeveralModelsAndHoursAreOneRead(t *testing.T) {
	ctx := context.Background()
	st, ids := twoListingsOfAModel(t)
	now := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour).Add(40 * time.Minute)
	h := now.Truncate(time.Hour)
	hours := []time.Time{h.Add(-time.Hour), h}
	reads := &minuteReads{Store: st}
	s := New(reads, nil, func() time.Time { return now })
	record := func(id int64, at time.Time, n int64) {
		t.Helper()
		if err := st.RecordBuckets(ctx, []catalogue.Bucket{{ListingID: id, Minute: at, Source: "a", Counts: catalogue.Counts{Requests: n}}}); err != nil {
			t.Fatal(err)
		}
	}
	record(ids[0], hours[0].Add(5*time.Minute), 3)
	record(ids[0], h.Add(7*time.Minute), 4)
	record(ids[1], h.Add(7*time.Minute), 5)
	record(ids[1], h.Add(20*time.Minute), 6)
	// Each listing a group of its own, as two models would be.
	asks := []minuteAsk{{[]int64{ids[0]}, hours[0]}, {[]int64{ids[0]}, h}, {[]int64{ids[1]}, hours[0]}, {[]int64{ids[1]}, h}}
	want := []map[time.Time]int64{
		{hours[0].Add(5 * time.Minute): 3}, {h.Add(7 * time.Minute): 4},
		{}, {h.Add(7 * time.Minute): 5, h.Add(20 * time.Minute): 6},
	}
	check := func(step string, wantReads int) {
		t.Helper()
		before := reads.reads
		got, err := s.requestsByMinuteOf(ctx, asks)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range asks {
			if !maps.Equal(got[i], want[i]) {
				t.Errorf("%s: listing %d, hour %s: %v, want %v", step, a.ids[0], a.hour.Format("15:04"), got[i], want[i])
			}
		}
		if n := reads.reads - before; n != wantReads {
			t.Errorf("%s: %d reads, want %d", step, n, wantReads)
		}
	}
	check("first", 1)
	check("nothing new", 0)
	record(ids[1], h.Add(30*time.Minute), 2)
	want[3][h.Add(30*time.Minute)] = 2
	check("after a batch of the later hour", 1)
}

// TestFareHistoriesAreKeptPerRevision: the projection's fare histories are
// read once per routing revision; a fare published moves the revision, and
// the next read has it.
func TestFareHistoriesAreKeptPerRevision(t *testing.T) {
	ctx := context.Background()
	st, ids := twoListingsOfAModel(t)
	publish := func(id int64, input money.Micros) {
		t.Helper()
		if _, err := st.PublishSeedFare(ctx, &fare.Fare{ListingID: id, Input: input, Output: 2 * input, LandingFee: 2000, CapScope: fare.ScopeGlobal}); err != nil {
			t.Fatal(err)
		}
	}
	publish(ids[0], 500000) // orbit has no fare yet
	s := New(st, nil, time.Now)
	read := func(revision int64) (map[int64][]earnings.FareSpan, int64) {
		t.Helper()
		before := st.Statements()
		got, err := s.fareHistories(ctx, revision, ids)
		if err != nil {
			t.Fatal(err)
		}
		return got, st.Statements() - before
	}
	inputs := func(h map[int64][]earnings.FareSpan, id int64) []money.Micros {
		var out []money.Micros
		for _, f := range h[id] {
			out = append(out, f.Fare.Input)
		}
		return out
	}
	first, statements := read(1)
	if statements == 0 || !slices.Equal(inputs(first, ids[0]), []money.Micros{500000}) || len(first[ids[1]]) != 0 {
		t.Fatalf("first read (%d statements): nebula %v, orbit %v", statements, inputs(first, ids[0]), inputs(first, ids[1]))
	}
	if _, statements := read(1); statements != 0 {
		t.Errorf("read again at the same revision: %d statements", statements)
	}
	publish(ids[1], 400000)
	publish(ids[0], 450000)
	next, statements := read(2)
	if statements == 0 || !slices.Equal(inputs(next, ids[0]), []money.Micros{500000, 450000}) || !slices.Equal(inputs(next, ids[1]), []money.Micros{400000}) {
		t.Errorf("after publications, at the next revision (%d statements): nebula %v, orbit %v", statements, inputs(next, ids[0]), inputs(next, ids[1]))
	}
}

// twoListingsOfAModel is a store holding one model and a listing of it for
// each of two carriers, and their ids.
func twoListingsOfAModel(t *testing.T) (*store.Store, []int64) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	model, err := st.CreateModel(ctx, nil, catalogue.Model{Slug: "glm-5", Name: "GLM-5", ContextTokens: 200000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, slug := range []string{"nebula", "orbit"} {
		carrier, err := st.CreateCarrier(ctx, nil, slug, slug)
		if err != nil {
			t.Fatal(err)
		}
		id, err := st.CreateListing(ctx, nil, carrier.ID, model.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return st, ids
}
