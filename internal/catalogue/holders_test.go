package catalogue

import (
	"context"
	"fmt"
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
// minute that is not a minute's start or outside what the portal takes, a
// second outside the minute, one shape's second twice, elections below zero
// or more rows of a shape's minute than MaxHolderRows, is refused naming
// the row and field, and nothing of it is stored; a good one (a minute's
// first holder and moves later in it) is stored whole.
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
		{"a second past the minute", []ShapeHolder{with(func(h *ShapeHolder) { h.Second = 60 })}, "holders[0].second"},
		{"a shape's second twice", []ShapeHolder{good, good}, "holders[1].second"},
		{"elections below zero", []ShapeHolder{with(func(h *ShapeHolder) { h.Requests = -1 })}, "holders[0].requests"},
		{"a shape moved too often in a minute", moves(good, MaxHolderRows+1), fmt.Sprintf("holders[%d].minute", MaxHolderRows)},
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
	report := append(moves(good, MaxHolderRows), other)
	if n, err := in.RecordHolders(context.Background(), st, report); err != nil || n != len(report) || len(st.recorded) != len(report) {
		t.Errorf("a good report: %d, %v, stored %v", n, err, st.recorded)
	}
}

// moves is a shape's minute with n rows: its first holder at h's second and
// a move every 4 seconds after it.
func moves(h ShapeHolder, n int) []ShapeHolder {
	out := make([]ShapeHolder, n)
	for i := range out {
		out[i] = h
		out[i].Second = h.Second + 4*i
		out[i].ListingID = h.ListingID
	}
	return out
}
