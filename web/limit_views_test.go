package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// fakeLimitReads answers the limit minutes of one listing and the model's
// sums over any minutes; other reads are left to the nil interface.
type fakeLimitReads struct {
	TrafficReads
	minutes []catalogue.Bucket
	sums    map[int64]catalogue.Counts
	asked   [][2]time.Time
}

func (f *fakeLimitReads) LimitMinutes(context.Context, int64, time.Time) ([]catalogue.Bucket, error) {
	return f.minutes, nil
}

func (f *fakeLimitReads) MinuteSums(_ context.Context, _ int64, since, until time.Time) (map[int64]catalogue.Counts, error) {
	f.asked = append(f.asked, [2]time.Time{since, until})
	return f.sums, nil
}

// TestTheListingSaysWhenTheGatewayHeldItBack: the listing's traffic page
// says when the breaker paused it and why (its failures over the five
// minutes up to the opening against the median of the model's other
// listings), in the carrier's time zone, and when 429 backoffs or latency
// backoffs held it back; a breaker not closed yet says how it comes back.
func TestTheListingSaysWhenTheGatewayHeldItBack(t *testing.T) {
	now := time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)
	m := func(h, min int) time.Time { return time.Date(2026, 12, 4, h, min, 0, 0, time.UTC) }
	reads := &fakeLimitReads{
		minutes: []catalogue.Bucket{
			{Minute: m(14, 2), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{BreakerOpenings: 1}}},
			{Minute: m(14, 2), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{BreakerClosings: 1}}},
			{Minute: m(14, 30), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{Backoffs: 2}}},
			{Minute: m(14, 40), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{SlowBackoffs: 1}}},
			{Minute: m(14, 41), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{SlowBackoffs: 1}}},
			{Minute: m(14, 50), Counts: catalogue.Counts{GatewayCounts: catalogue.GatewayCounts{BreakerOpenings: 1}}},
		},
		sums: map[int64]catalogue.Counts{
			7: {Requests: 59, Errors: 24, GatewayCounts: catalogue.GatewayCounts{RateLimited: 1}}, // 40 % of 60 tries
			8: {Requests: 100, Errors: 2},
			9: {Requests: 50, Errors: 1},
		},
	}
	s := &Server{TrafficReads: reads, Now: func() time.Time { return now }}
	l := &catalogue.Listing{ID: 7, Model: catalogue.Model{ID: 3, Slug: "kimi-k2.5"}}
	lines, err := s.limitSpells(context.Background(), l, time.FixedZone("UTC+1", 3600))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 {
		t.Fatalf("lines %q", lines)
	}
	if !strings.HasPrefix(lines[0], "Paused by the breaker 15:02–15:03: 40") || !strings.Contains(lines[0], "against a median of 2") {
		t.Errorf("the closed breaker: %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "Held back after 429s 15:30–15:31: 2 backoffs") {
		t.Errorf("the backoffs: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "Held back for slow first tokens 15:40–15:42: 2 latency backoffs") {
		t.Errorf("the latency backoffs: %q", lines[2])
	}
	if !strings.HasPrefix(lines[3], "Paused by the breaker since 15:50") || !strings.Contains(lines[3], "10 good answers in a row") {
		t.Errorf("the open breaker: %q", lines[3])
	}
	if len(reads.asked) != 2 || !reads.asked[0][0].Equal(m(13, 58)) || !reads.asked[0][1].Equal(m(14, 3)) {
		t.Errorf("the reason was read over %v, want the five minutes up to the opening", reads.asked)
	}
}
