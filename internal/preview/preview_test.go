package preview

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/traffic"
)

func price(s string) money.Micros {
	m, err := money.ParsePrice(s)
	if err != nil {
		panic(err)
	}
	return m
}

func ptr[T any](v T) *T { return &v }

// market is four carriers of one model; listing 1 is "ours".
func market() Market {
	mk := func(id int64, slug string, in, out string, cached *money.Micros, lf money.BasisPoints, uptime, ttft, tps float64) catalogue.Listing {
		return catalogue.Listing{ID: id, CarrierID: id, CarrierSlug: slug, CarrierName: slug, Status: catalogue.StatusInService, PriorityBP: 10000,
			Model: catalogue.Model{ID: 1, Slug: "kimi-k2.5", Name: "Kimi K2.5"},
			Published: &fare.Fare{ListingID: id, Input: price(in), Output: price(out), CachedInput: cached, LandingFee: lf, CapScope: fare.ScopeGlobal,
				Capabilities: []election.Capability{election.CapTools}},
			Health: catalogue.Health{UptimePct: ptr(uptime), LatencyMs: ptr(ttft), ThroughputTPS: ptr(tps)}}
	}
	return Market{
		Listings: []catalogue.Listing{
			mk(1, "ours", "0.60", "2.50", ptr(price("0.15")), 2000, 99.5, 400, 70),
			mk(2, "rival", "0.55", "2.20", ptr(price("0.30")), 2000, 99.0, 350, 90),
			mk(3, "cheap-shaky", "0.40", "1.80", nil, 3000, 92.0, 900, 40),
			mk(4, "fast", "0.70", "2.80", ptr(price("0.10")), 2000, 99.9, 200, 160),
		},
		Checks: map[int64]map[string]string{2: {"tools": "verified"}, 4: {"tools": "verified"}},
	}
}

var at = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func TestStandardScenarios(t *testing.T) {
	sc := StandardScenarios()
	if len(sc) != 8 {
		t.Fatalf("%d scenarios", len(sc))
	}
	want := map[string]Scenario{
		"small-auto":  {PromptTokens: 1000, Workload: election.WorkloadGeneral, Routing: election.ModeAuto},
		"large-price": {PromptTokens: 20000, Workload: election.WorkloadGeneral, Routing: election.ModePrice},
		"coding-auto": {PromptTokens: 40000, Workload: election.WorkloadCoding, Streaming: true, SessionOpening: true, Routing: election.ModeAuto},
		"chat-price":  {PromptTokens: 8000, Workload: election.WorkloadChat, Streaming: true, Routing: election.ModePrice},
	}
	seen := map[string]bool{}
	for _, s := range sc {
		seen[s.Key] = true
		if w, ok := want[s.Key]; ok && (s.PromptTokens != w.PromptTokens || s.Workload != w.Workload || s.Streaming != w.Streaming ||
			s.SessionOpening != w.SessionOpening || s.Routing != w.Routing) {
			t.Errorf("%s = %+v", s.Key, s)
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no scenario %s", k)
		}
	}
}

func TestOnlyVerifiedCapabilitiesCount(t *testing.T) {
	m := market()
	custom := Scenario{Key: "tools", Name: "Tools", PromptTokens: 1000, Requires: election.CapabilitySet(election.CapTools)}
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Custom: &custom})
	last := res.Scenarios[len(res.Scenarios)-1]
	if last.Mine.Eligible || len(last.Mine.Excluded) != 1 || last.Mine.Excluded[0] != "capability:tools" {
		t.Errorf("declared but unverified tools: %+v", last.Mine)
	}
	if last.Win.Price.CanWin || last.Win.Reason == "" {
		t.Errorf("an excluded listing was told it can win: %+v", last.Win)
	}
}

// TestProposalsWinAndNoLess feeds each proposal back into a real election:
// it must reach rank 1, and one cent less ambitious must not.
func TestProposalsWinAndNoLess(t *testing.T) {
	m := market()
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at})
	mine := m.Listings[0].Published
	for _, s := range res.Scenarios {
		t.Run(s.Scenario.Key, func(t *testing.T) {
			if s.Win.WinsNow {
				return
			}
			if !s.Win.Price.CanWin {
				t.Fatalf("no price wins: %s", s.Win.Reason)
			}
			rankWith := func(f *fare.Fare) int {
				b, me := m.Ballot(s.Scenario.Request("kimi-k2.5", at), Change{ListingID: 1, Fare: f})
				return election.Elect(&b).Candidates[me].Rank
			}
			proposed := *mine
			proposed.Input, proposed.Output, proposed.CachedInput = s.Win.NewInput, s.Win.NewOutput, s.Win.NewCachedInput
			if r := rankWith(&proposed); r != 1 {
				t.Errorf("the proposed fare %s/%s ranks %d", proposed.Input, proposed.Output, r)
			}
			// One cent more on the input, the other prices scaled alike.
			m2 := s.Win.Price.Value + 0.01/mine.Input.Float()
			lessAmbitious := *mine
			lessAmbitious.Input, lessAmbitious.Output, lessAmbitious.CachedInput = scaledPrices(mine, m2)
			if r := rankWith(&lessAmbitious); r == 1 {
				t.Errorf("one cent less ambitious (%s) still wins", lessAmbitious.Input)
			}
			if s.Win.LandingFee.CanWin {
				withFee := *mine
				withFee.LandingFee = s.Win.LandingFeeBP
				if r := rankWith(&withFee); r != 1 {
					t.Errorf("landing fee %s %% ranks %d", s.Win.LandingFeeBP.Percent(), r)
				}
				withFee.LandingFee = s.Win.LandingFeeBP - 1
				if s.Win.LandingFeeBP > fare.MinLandingFee && rankWith(&withFee) == 1 {
					t.Errorf("a basis point below the proposed fee still wins")
				}
			}
		})
	}
}

func TestShareProjectionByHand(t *testing.T) {
	m := market()
	mix := map[string]float64{"small": 50, "large": 50}
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Mix: mix})
	var want float64
	for _, s := range res.Scenarios {
		if s.Scenario.Key != "small-auto" && s.Scenario.Key != "large-auto" {
			continue
		}
		// The gateway's rule: the holder keeps all but the 1 % explored,
		// which the others share.
		share := traffic.ExplorationRate / float64(s.Mine.Of-1)
		if s.HolderIsMe {
			share = 1 - traffic.ExplorationRate
		}
		want += 0.5 * share
	}
	if math.Abs(res.Share.Total-want) > 1e-12 {
		t.Errorf("share %v, want %v", res.Share.Total, want)
	}
	if res.Share.Mix[2].Percent != 0 || res.Share.Mix[0].Percent != 50 {
		t.Errorf("mix %+v", res.Share.Mix)
	}
	// Revenue for the small one-shot by hand: 1,000 prompt tokens at the input
	// price and 200 output tokens, times (1 - 0) x (1 - 0.20).
	small := res.Share.Mix[0]
	wantPerRequest := (1000*0.60 + 200*2.50) / 1e6 * 0.8
	if math.Abs(small.RevenuePerRequest-wantPerRequest) > 1e-15 {
		t.Errorf("revenue per small request %v, want %v", small.RevenuePerRequest, wantPerRequest)
	}
	even := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at})
	for _, ms := range even.Share.Mix {
		if ms.Percent != 25 {
			t.Errorf("even mix gives %s %v %%", ms.Key, ms.Percent)
		}
	}
}

func TestFeeCurveFollowsTheElection(t *testing.T) {
	m := market()
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Focus: "small-price"})
	c := res.FeeCurve
	if len(c.FeesBP) != 46 || c.FeesBP[0] != 500 || c.FeesBP[45] != 5000 || c.CurrentBP != 2000 {
		t.Fatalf("fee axis %v", c.FeesBP)
	}
	var mine Series
	for _, s := range c.Series {
		if s.IsMe {
			mine = s
		}
	}
	for i := 1; i < len(mine.Points); i++ {
		if mine.Points[i] > mine.Points[i-1]+1e-12 {
			t.Errorf("a higher landing fee raised our score at %d bp", c.FeesBP[i])
		}
	}
	// The point at the current fee is the scenario's own score.
	for _, s := range res.Scenarios {
		if s.Scenario.Key == "small-price" && math.Abs(mine.Points[15]-s.Mine.Score) > 1e-12 {
			t.Errorf("curve at 20 %% = %v, scenario score %v", mine.Points[15], s.Mine.Score)
		}
	}
}

func TestHeatmapFollowsPeakHours(t *testing.T) {
	m := market()
	f := *m.Listings[0].Published
	f.TimeBased = &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 8, End: 18}},
		Peak: fare.Prices{Input: ptr(price("5.00")), Output: ptr(price("9.00"))}, OffPeak: fare.Prices{Input: ptr(price("0.10")), Output: ptr(price("0.20"))}}
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, Fare: &f, At: at, Focus: "small-price"})
	if res.Heatmap == nil {
		t.Fatal("no heatmap for a peak/off-peak fare")
	}
	for d := range 7 {
		for h := range 24 {
			rank := res.Heatmap.Ranks[d][h]
			peak := h >= 8 && h < 18
			if peak && rank == 1 || !peak && rank != 1 {
				t.Errorf("day %d hour %d: rank %d (peak=%v)", d, h, rank, peak)
			}
		}
	}
	if Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at}).Heatmap != nil {
		t.Error("a heatmap for a fare without peak/off-peak prices")
	}
}

func TestBallotHidesNothingItShouldShowAndShowsNothingPrivate(t *testing.T) {
	res := Build(Input{Market: market(), Model: "kimi-k2.5", ListingID: 1, At: at})
	s := res.Scenarios[0]
	if len(s.Ballot) != 4 || s.Ballot[0].Rank != 1 {
		t.Fatalf("ballot %+v", s.Ballot)
	}
	me := 0
	for _, c := range s.Ballot {
		if c.IsMe {
			me++
		}
	}
	if me != 1 {
		t.Errorf("%d entries marked as ours", me)
	}
	// Competitor carries no field for a landing fee or discount: the type is
	// the guarantee; check the values shown are the list prices.
	if fmt.Sprint(s.Ballot[len(s.Ballot)-1].Input) == "" {
		t.Error("no list price")
	}
}

// BenchmarkFullPreview is the whole preview a carrier sees as it types (8
// scenarios, every solver lever, the fee curve, the bars and the 168-hour
// heatmap) at 5, 20, 100 and 500 competitors.
func BenchmarkFullPreview(b *testing.B) {
	for _, competitors := range []int{5, 20, 100, 500} {
		m := market()
		base := m.Listings[1]
		for i := range competitors - len(m.Listings) + 1 {
			l := base
			l.ID = int64(10 + i)
			l.CarrierName = fmt.Sprintf("c%d", i)
			l.CarrierSlug = l.CarrierName
			f := *base.Published
			f.Input = f.Input + money.Micros(i*7000)
			l.Published = &f
			m.Listings = append(m.Listings, l)
		}
		f := *m.Listings[0].Published
		f.TimeBased = &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 8, End: 18}}, Peak: fare.Prices{Input: ptr(price("0.90"))}, OffPeak: fare.Prices{Input: ptr(price("0.30"))}}
		b.Run(fmt.Sprintf("competitors=%d", len(m.Listings)-1), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, Fare: &f, At: at})
			}
		})
		if competitors != 20 {
			continue
		}
		// Sets of preferences on every auto scenario, each a ballot of its
		// own and its own plan (catalogue.MaxPreferenceSets at most).
		for _, n := range []int{8, catalogue.MaxPreferenceSets} {
			sets := make([]PreferencePart, n)
			for i := range sets {
				sets[i] = PreferencePart{Preferences: &catalogue.Preferences{Provider: election.Provider{Ignore: []string{fmt.Sprintf("c%d", i)}}}, Part: 0.5 / float64(n)}
			}
			prefs := map[string][]PreferencePart{"small": sets, "large": sets, "coding": sets, "chat": sets}
			b.Run(fmt.Sprintf("competitors=%d/sets=%d", len(m.Listings)-1, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, Fare: &f, At: at, Preferences: prefs})
				}
			})
		}
	}
}

// TestHeatmapElectsOncePerBlockCombination: the heatmap, which elects once
// per combination of time-of-day blocks, equals one election per hour.
func TestHeatmapElectsOncePerBlockCombination(t *testing.T) {
	m := market()
	// Two competitors with schedules of their own, in different offsets.
	for i, l := range m.Listings[1:3] {
		f := *l.Published
		f.TimeBased = &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 6 + 4*i, End: 14 + 3*i}},
			OffPeakDays: []time.Weekday{time.Saturday}, UTCOffsetMinutes: 480 * i,
			Peak: fare.Prices{Input: ptr(price("0.95"))}, OffPeak: fare.Prices{Input: ptr(price("0.21"))}}
		m.Listings[i+1].Published = &f
	}
	mine := *m.Listings[0].Published
	mine.TimeBased = &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 8, End: 18}}, Peak: fare.Prices{Input: ptr(price("0.90"))}, OffPeak: fare.Prices{Input: ptr(price("0.30"))}}
	in := Input{Market: m, Model: "kimi-k2.5", ListingID: 1, Fare: &mine, At: at}
	change := Change{ListingID: 1, Fare: &mine}
	for _, sc := range StandardScenarios() {
		got := heatmap(in, sc, change)
		var want Heatmap
		sunday := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -int(at.Weekday()))
		var res election.Result
		for d := range 7 {
			for hour := range 24 {
				ballot, _, me := m.BallotEntries(sc.Request(in.Model, sunday.Add(time.Duration(d*24+hour)*time.Hour)), change)
				election.ElectInto(&ballot, &res)
				want.Ranks[d][hour] = res.Candidates[me].Rank
				eligible := 0
				for _, o := range res.Candidates {
					if o.Eligible {
						eligible++
					}
				}
				want.Of = max(want.Of, eligible)
			}
		}
		if got.Ranks != want.Ranks || got.Of != want.Of {
			t.Errorf("%s: heatmap %v of %d, one election per hour gives %v of %d", sc.Name, got.Ranks, got.Of, want.Ranks, want.Of)
		}
	}
}

// TestIncumbentKeepsTrafficWithinTheMargin walks our input price down until
// we barely score best in the small one-shot: the incumbent keeps the
// traffic; far lower we take it; and an incumbent under 85 % uptime loses it
// at once.
func TestIncumbentKeepsTrafficWithinTheMargin(t *testing.T) {
	// percent scales every filed price of ours.
	small := func(m Market, percent int) ScenarioResult {
		f := *m.Listings[0].Published
		f.Input, f.Output = f.Input.Scale(int64(percent), 100), f.Output.Scale(int64(percent), 100)
		f.CachedInput = ptr(f.CachedInput.Scale(int64(percent), 100))
		res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Fare: &f})
		return res.Scenarios[0] // small one-shot (auto)
	}
	m := market()
	published := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at}).Scenarios[0]
	if published.Mine.Rank == 1 {
		t.Fatal("the test needs ours not to be the incumbent")
	}
	barely := 0
	for percent := 100; percent > 0; percent-- {
		if small(m, percent).Mine.Rank == 1 {
			barely = percent
			break
		}
	}
	if barely == 0 {
		t.Fatal("no price wins the small one-shot")
	}
	r := small(m, barely)
	if r.HolderIsMe || !strings.Contains(r.HolderNote, "within the 0.15 margin") || r.Holder != published.Winner {
		t.Errorf("barely best at %d %%: holder %q (me %v), %q; want the incumbent %q to keep it", barely, r.Holder, r.HolderIsMe, r.HolderNote, published.Winner)
	}
	if far := small(m, 1); !far.HolderIsMe || !strings.Contains(far.HolderNote, "more than the 0.15 margin") {
		t.Errorf("far ahead: me %v, %q", far.HolderIsMe, far.HolderNote)
	}
	// The incumbent slips under 85 % but, far cheaper, still wins the
	// published election: the gateway moves its traffic anyway.
	for i := range m.Listings {
		if m.Listings[i].CarrierName == published.Winner {
			m.Listings[i].Health.UptimePct = ptr(84.9)
			cheaper := *m.Listings[i].Published
			cheaper.Input, cheaper.Output = price("0.05"), price("0.20")
			m.Listings[i].Published = &cheaper
		}
	}
	if again := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at}).Scenarios[0]; again.Winner != published.Winner {
		t.Fatalf("the incumbent under 85 %% no longer wins as published (%s): the test needs it to", again.Winner)
	}
	judged := false
	for percent := 100; percent > 0 && !judged; percent-- {
		if r := small(m, percent); r.Mine.Rank == 1 {
			judged = true
			if !r.HolderIsMe || !strings.Contains(r.HolderNote, "under 85 %") {
				t.Errorf("best score over an incumbent under 85 %%: me %v, %q", r.HolderIsMe, r.HolderNote)
			}
		}
	}
	if !judged {
		t.Error("no price beats the cheap incumbent: the 85 % rule went untested")
	}
	// With two requests behind its 84.9 %, the incumbent's uptime on the
	// ballot is blended toward its peers' (election.md sec. 4), over 85 %:
	// routing (traffic.Keeps) judges it on that, so the preview does too.
	for i := range m.Listings {
		m.Listings[i].Health.Requests = ptr(300.0)
		if m.Listings[i].CarrierName == published.Winner {
			m.Listings[i].Health.Requests = ptr(2.0)
		}
	}
	for percent := 100; percent > 0; percent-- {
		if r := small(m, percent); r.Mine.Rank == 1 {
			if strings.Contains(r.HolderNote, "under 85 %") {
				t.Errorf("an incumbent blended over 85 %% judged on its own 84.9 %%: me %v, %q", r.HolderIsMe, r.HolderNote)
			}
			break
		}
	}
}

func TestMixFromDemandMapsWorkloadsOntoTheShapes(t *testing.T) {
	mix, total := MixFromDemand(map[string]catalogue.WorkloadDemand{
		"general": {Requests: 100, LargeRequests: 30}, "coding": {Requests: 50, LargeRequests: 50}, "chat": {Requests: 20}})
	want := map[string]float64{"small": 70, "large": 30, "coding": 50, "chat": 20}
	for k, v := range want {
		if mix[k] != v {
			t.Errorf("%s: %v, want %v (mix %v)", k, mix[k], v, mix)
		}
	}
	if total != 170 {
		t.Errorf("total %d, want 170", total)
	}
	if _, none := MixFromDemand(nil); none != 0 {
		t.Errorf("no demand gave %d requests", none)
	}
}

// TestSharePartsFromDemandMapsWorkloadsOntoTheShapes: the part of each
// shape's requests on the share policy is its workload's (small and large
// one-shots alike), none where no request of the workload was.
func TestSharePartsFromDemandMapsWorkloadsOntoTheShapes(t *testing.T) {
	for _, c := range []struct {
		name   string
		demand map[string]catalogue.WorkloadDemand
		want   map[string]float64
	}{
		{"none on share", map[string]catalogue.WorkloadDemand{"general": {Requests: 100}, "coding": {Requests: 50}}, nil},
		{"one-shots on share, sessions elected", map[string]catalogue.WorkloadDemand{
			"general": {Requests: 100, LargeRequests: 30, SharePolicy: 40}, "coding": {Requests: 50}, "chat": {Requests: 20, SharePolicy: 20}},
			map[string]float64{"small": 0.4, "large": 0.4, "chat": 1}},
		{"a count past the requests is all of them", map[string]catalogue.WorkloadDemand{"coding": {Requests: 10, SharePolicy: 12}}, map[string]float64{"coding": 1}},
	} {
		if got := SharePartsFromDemand(c.demand); !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPromptsFromDemandAndScenariosThatUseThem: each shape's measured
// average prompt (rounded), the general workload split at the large line;
// the scenarios of a shape take it under both routing modes, the rest
// keep their standard sizes.
func TestPromptsFromDemandAndScenariosThatUseThem(t *testing.T) {
	got := PromptsFromDemand(map[string]catalogue.WorkloadDemand{
		"general": {Requests: 100, LargeRequests: 30, PromptTokens: 70*900 + 30*24000, LargePromptTokens: 30 * 24000},
		"coding":  {Requests: 3, PromptTokens: 20000}})
	want := map[string]int64{"small": 900, "large": 24000, "coding": 6667}
	if len(got) != len(want) {
		t.Errorf("prompts %v, want %v (no chat measured)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d tokens, want %d", k, got[k], v)
		}
	}
	for _, sc := range WithPrompts(StandardScenarios(), got) {
		key, _, _ := strings.Cut(sc.Key, "-")
		std := shapes[slices.IndexFunc(shapes, func(s Scenario) bool { return s.Key == key })].PromptTokens
		if w, ok := want[key]; ok && sc.PromptTokens != w || !ok && sc.PromptTokens != std {
			t.Errorf("%s: %d tokens", sc.Key, sc.PromptTokens)
		}
	}
}

// TestBallotsBlendLittleTrafficWithPeers: the portal's ballots blend health
// with the model's median exactly as the gateway does (election spec
// section 4); figures nobody measured (Requests nil) stand as they are.
func TestBallotsBlendLittleTrafficWithPeers(t *testing.T) {
	m := market()
	m.Listings[2].Health.UptimePct, m.Listings[2].Health.Requests = ptr(50.0), ptr(2.0) // cheap-shaky: 1 of 2 failed
	for _, i := range []int{0, 1, 3} {
		m.Listings[i].Health.Requests = ptr(300.0)
	}
	b, _ := m.Ballot(election.Request{Model: "kimi-k2.5"}, Change{})
	med := (99.5 + 99.0) / 2 // of 50, 99, 99.5, 99.9
	want := map[string]float64{"ours/kimi-k2.5": (300*99.5 + 20*med) / 320, "rival/kimi-k2.5": (300*99.0 + 20*med) / 320,
		"cheap-shaky/kimi-k2.5": (2*50 + 20*med) / 22, "fast/kimi-k2.5": (300*99.9 + 20*med) / 320}
	for _, c := range b.Candidates {
		if got := *c.Metrics.Uptime; math.Abs(got-want[c.ID]) > 1e-9 {
			t.Errorf("%s: uptime %.4f, want %.4f", c.ID, got, want[c.ID])
		}
	}
	if *m.Listings[2].Health.UptimePct != 50 {
		t.Error("the listing's own figure was written through")
	}
	stored := market() // Requests nil: a stored snapshot stands
	b, _ = stored.Ballot(election.Request{Model: "kimi-k2.5"}, Change{})
	if got := *b.Candidates[2].Metrics.Uptime; got != 92 {
		t.Errorf("a stored figure was blended: %.2f", got)
	}
}
