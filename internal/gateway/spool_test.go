package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// die leaves the spool as a killed process does: its files and its lock
// let go of by the kernel, nothing removed.
func (s *Spool) die() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for minute, f := range s.segments {
		f.Close()
		delete(s.segments, minute)
	}
	s.lock.Close()
}

func openSpool(t *testing.T, root, source string) *Spool {
	t.Helper()
	s, err := OpenSpool(root, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTheSpoolReadsBackWhatTheRecorderTook: every kind of count a recorder
// takes, read back from the spool of a process that died, makes the same
// minutes, demand, holders, organisations and learned hours; a line the
// kill cut short is the only thing lost; a live process's folder is never
// taken.
func TestTheSpoolReadsBackWhatTheRecorderTook(t *testing.T) {
	root := t.TempDir()
	rec := NewRecorder()
	rec.Spool = openSpool(t, root, "gw-1/0001")
	start := time.Date(2026, 12, 4, 10, 0, 30, 0, time.UTC)
	a, b := Route{ID: "a/m", ListingID: 1}, Route{ID: "b/m", ListingID: 2}
	shape := traffic.Shape{Model: "m", Workload: election.WorkloadCoding, CacheRelevant: true}
	for i := range 90 {
		at := start.Add(time.Duration(i) * time.Second)
		route, kind := a, Routed
		if i%7 == 0 {
			route, kind = b, Fallback
		}
		class := traffic.Served
		switch {
		case i%11 == 0:
			class = traffic.Counted
		case i%13 == 0:
			class = traffic.RateLimited
		}
		o := Outcome{Class: class, Status: 200, TTFT: time.Duration(40+i) * time.Millisecond, Total: time.Second,
			Usage: Usage{Input: int64(1000 + i), Cached: 200, CacheRead: 10, CacheWrite: 5, Output: 50}, ToolCalls: 1, BadToolCalls: int64(i % 2)}
		asked := []string(nil)
		if i%3 == 0 {
			asked = []string{"zdr", "regions:DE"}
		}
		rec.Demanded("m", election.WorkloadCoding, RequestKind{Streaming: i%2 == 0, Requires: election.Capabilities(i % 4)}, int64(1000+i*100), asked, at)
		rec.Held(shape, route, at)
		rec.Attempt("p", "m", route, kind, o, at)
		rec.UsedBy("org-1", route, o, at)
		if i%17 == 0 {
			rec.Capped(b, at)
			rec.HeldBack(b, at)
			rec.CacheHit("p", "m", a, at)
			rec.Limited(b, traffic.Event{Listing: b.ID, Limit: traffic.LimitBreaker, Opened: i%2 == 0, At: at, Until: at.Add(30 * time.Second), Detail: "40 %"})
		}
	}
	live := openSpool(t, root, "gw-1/0002")
	if orphans, err := live.Orphans(); err != nil || len(orphans) != 0 {
		t.Fatalf("a living process's folder was adopted: %d, %v", len(orphans), err)
	}
	// Killed in the middle of writing a count.
	rec.Spool.die()
	files, _ := segmentsIn(rec.Spool.Dir())
	if len(files) != 2 {
		t.Fatalf("%d minute files, want 2", len(files))
	}
	torn, err := os.OpenFile(files[len(files)-1], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(torn, `{"op":"attempt","at":"2026-12-04T10:0`)
	torn.Close()

	orphans, err := live.Orphans()
	if err != nil || len(orphans) != 1 {
		t.Fatalf("adopted %d folders (%v), want the dead process's", len(orphans), err)
	}
	o := orphans[0]
	if o.Source != "gw-1/0001" || o.Torn != 1 {
		t.Errorf("source %q, torn %d: want gw-1/0001 and the one cut line", o.Source, o.Torn)
	}
	end := start.Add(time.Hour)
	for name, take := range map[string]func(*Recorder) any{
		"minutes":       func(r *Recorder) any { return r.TakeClosed(end) },
		"demand":        func(r *Recorder) any { return r.TakeClosedDemand(end) },
		"holders":       func(r *Recorder) any { return r.TakeClosedHolders(end) },
		"organisations": func(r *Recorder) any { return r.TakeClosedOrgs(end) },
		"hours": func(r *Recorder) any {
			hours := r.Hours("p", "m", start) // in the map's order
			sort.Slice(hours, func(i, j int) bool { return hours[i].Candidate < hours[j].Candidate })
			return hours
		},
	} {
		want, got := take(rec), take(o.Recorder)
		if reflect.ValueOf(want).Len() == 0 {
			t.Errorf("%s: the recorder took none (the test records nothing of them)", name)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s read back:\n%+v\nwant\n%+v", name, got, want)
		}
	}
	if err := o.Done(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rec.Spool.Dir()); !os.IsNotExist(err) {
		t.Errorf("the adopted folder is still there once posted: %v", err)
	}
}

// TestTheSpoolForgetsWhatThePortalHas: posted minutes' files go; a clean
// stop with everything posted leaves no folder, one with minutes unposted
// leaves them for the next process.
func TestTheSpoolForgetsWhatThePortalHas(t *testing.T) {
	root := t.TempDir()
	s, err := OpenSpool(root, "gw")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		s.write(spoolEntry{Op: opCapped, At: start.Add(time.Duration(i) * time.Minute), Route: &spoolRoute{ID: "a/m", ListingID: 1}})
	}
	s.Posted(start.Add(2*time.Minute - time.Second)) // the second minute is not over
	if files, _ := segmentsIn(s.Dir()); len(files) != 2 {
		t.Errorf("%d files left, want the two minutes not posted", len(files))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := segmentsIn(s.Dir()); len(files) != 2 {
		t.Errorf("a stop with minutes unposted kept %d files, want 2", len(files))
	}
	s, err = OpenSpool(root, "gw2")
	if err != nil {
		t.Fatal(err)
	}
	s.Posted(start.Add(time.Hour))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("a clean stop left its folder: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("%d folders in the spool, want the one with minutes unposted", len(entries))
	}
}

// TestAKilledGatewaysMinutesArePostedByTheNext: a gateway posts its first
// minute, serves more and is killed; the next process on the same spool
// posts the rest under the dead process's source (not before the portal is
// back), and the portal then holds every request served, each once.
func TestAKilledGatewaysMinutesArePostedByTheNext(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	root := t.TempDir()
	first := openSpool(t, root, "gw/dead")
	h.gw.Recorder.Spool = first
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock, Source: "gw/dead", Grace: 5 * time.Second}
	served := 0
	send := func(n int) {
		for range n {
			if res := h.chat(hello); res.status != 200 {
				t.Fatalf("%d %s", res.status, res.body)
			}
			served++
			h.advance(7 * time.Second)
		}
	}
	send(12)
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	posted := len(h.portal.buckets)
	if posted == 0 {
		t.Fatal("the first minute was not posted")
	}
	send(5) // the open minute and the one after, not posted
	first.die()

	next := &Reporter{API: h.gw.Follower.API, Recorder: NewRecorder(), Log: h.gw.Log, Now: h.clock, Source: "gw/next"}
	next.Recorder.Spool = openSpool(t, root, "gw/next")
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	if err := next.AdoptOrphans(context.Background()); err == nil {
		t.Fatal("the counts were taken as posted with the portal away")
	}
	h.portal.mu.Lock()
	h.portal.down = false
	h.portal.mu.Unlock()
	if err := next.AdoptOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.portal.mu.Lock()
	defer h.portal.mu.Unlock()
	var requests int64
	seen := map[string]bool{}
	for _, b := range h.portal.buckets {
		requests += b.Requests
		key := fmt.Sprint(*b.ListingId, b.Minute, *b.Source)
		if seen[key] {
			t.Errorf("listing %d's minute %s posted twice", *b.ListingId, b.Minute)
		}
		seen[key] = true
		if *b.Source != "gw/dead" {
			t.Errorf("a minute posted under %q, want the dead process's source", *b.Source)
		}
	}
	var demanded int64
	for _, d := range h.portal.demand {
		demanded += d.Requests
	}
	if requests != int64(served) || demanded != int64(served) {
		t.Errorf("the portal holds %d requests served and %d demanded, want the %d served", requests, demanded, served)
	}
	if next.Adopted() == 0 {
		t.Error("the adopted counts are not counted")
	}
	if _, err := os.Stat(filepath.Join(root, spoolFolder("gw/dead"))); !os.IsNotExist(err) {
		t.Errorf("the dead process's folder is still there: %v", err)
	}
}
