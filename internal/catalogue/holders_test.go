package catalogue

import (
	"context"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
)

type holderStore struct{ recorded []ShapeHolder }

func (s *holderStore) RecordShapeHolders(_ context.Context, h []ShapeHolder) (int, error) {
	s.recorded = append(s.recorded, h...)
	return len(h), nil
}

// TestShapeHolderReportsAreCheckedWhole: a report naming a listing of
// another model, an unknown listing, a workload the contract lacks, a
// minute that is not a minute's start or outside what the portal takes, or
// one shape's minute twice, is refused naming the row and field, and
// nothing of it is stored; a good one is stored whole.
func TestShapeHolderReportsAreCheckedWhole(t *testing.T) {
	good := ShapeHolder{Model: "kimi", Workload: "general", ListingID: 7, Minute: minute(1), Source: "gw"}
	with := func(change func(*ShapeHolder)) ShapeHolder {
		h := good
		change(&h)
		return h
	}
	for _, test := range []struct {
		name    string
		holders []ShapeHolder
		field   string
	}{
		{"another model's listing", []ShapeHolder{with(func(h *ShapeHolder) { h.Model = "glm" })}, "holders[0].listingId"},
		{"an unknown listing", []ShapeHolder{good, with(func(h *ShapeHolder) { h.ListingID = 8 })}, "holders[1].listingId"},
		{"a workload not in the contract", []ShapeHolder{with(func(h *ShapeHolder) { h.Workload = "batch" })}, "holders[0].workload"},
		{"seconds in the minute", []ShapeHolder{with(func(h *ShapeHolder) { h.Minute = h.Minute.Add(time.Second) })}, "holders[0].minute"},
		{"a minute ahead", []ShapeHolder{with(func(h *ShapeHolder) { h.Minute = minute(-3) })}, "holders[0].minute"},
		{"a minute the portal no longer takes", []ShapeHolder{with(func(h *ShapeHolder) { h.Minute = minute(26 * 60) })}, "holders[0].minute"},
		{"a shape's minute twice", []ShapeHolder{good, good}, "holders[1].minute"},
		{"no rows", nil, "holders"},
	} {
		st := &holderStore{}
		in := &Ingest{Store: &ingestStore{}, Now: func() time.Time { return now }}
		_, err := in.RecordHolders(context.Background(), st, test.holders)
		if apperr.FieldErrors(err)[test.field] == "" || len(st.recorded) != 0 {
			t.Errorf("%s: %v (fields %v), %d stored; want %s refused and nothing stored", test.name, err, apperr.FieldErrors(err), len(st.recorded), test.field)
		}
	}
	st := &holderStore{}
	in := &Ingest{Store: &ingestStore{}, Now: func() time.Time { return now }}
	other := with(func(h *ShapeHolder) { h.CacheRelevant = true })
	if n, err := in.RecordHolders(context.Background(), st, []ShapeHolder{good, other}); err != nil || n != 2 || len(st.recorded) != 2 {
		t.Errorf("a good report: %d, %v, stored %v", n, err, st.recorded)
	}
}
