// Package demo seeds a realistic catalogue for trying Airside: models served
// by several carriers at prices in the ranges real providers charge, with
// tiers, a peak/off-peak fare, landing fees, discounts and varied health, plus
// demo logins for every role.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
)

// Password is every demo account's password.
const Password = "airside-demo"

// Login is one demo account.
type Login struct {
	Email, Role string
}

// Logins are the demo accounts, in the order they are printed.
var Logins = []Login{
	{"admin@airside.example", "gateway admin"},
	{"reviewer@airside.example", "reviewer"},
	{"admin@nebula.example", "carrier admin, Nebula Inference"},
	{"member@nebula.example", "carrier member, Nebula Inference"},
	{"admin@orbit.example", "carrier admin, Orbit Compute"},
	{"member@orbit.example", "carrier member, Orbit Compute"},
}

type carrierSpec struct{ slug, name string }

var carriers = []carrierSpec{
	{"nebula", "Nebula Inference"}, {"orbit", "Orbit Compute"}, {"fathom", "Fathom AI"}, {"lumen", "Lumen Cloud"},
	{"tessera", "Tessera Labs"}, {"quarry", "Quarry GPU"}, {"halcyon", "Halcyon Systems"}, {"vantage", "Vantage Serve"},
}

// modelSpec gives a model's price ranges in USD per million tokens.
type modelSpec struct {
	slug, name       string
	contextTokens    int64
	input, output    [2]float64
	cachedShare      [2]float64 // cached price as a share of input
	servedBy         []string
	tierAbove        int64 // > 0: some carriers file a long-context tier
	peakOffPeakOwner string
}

var models = []modelSpec{
	{"kimi-k2.5", "Kimi K2.5", 262144, [2]float64{0.45, 0.62}, [2]float64{2.0, 3.0}, [2]float64{0.15, 0.55},
		[]string{"nebula", "orbit", "fathom", "lumen", "tessera", "quarry"}, 131072, ""},
	{"deepseek-v3.2", "DeepSeek V3.2", 163840, [2]float64{0.24, 0.32}, [2]float64{0.38, 0.48}, [2]float64{0.08, 0.12},
		[]string{"nebula", "orbit", "fathom", "halcyon", "vantage"}, 0, "orbit"},
	{"deepseek-v4-flash", "DeepSeek V4 Flash", 131072, [2]float64{0.09, 0.16}, [2]float64{0.28, 0.50}, [2]float64{0.10, 0.25},
		[]string{"nebula", "lumen", "quarry", "vantage"}, 0, ""},
	{"glm-5", "GLM-5", 202752, [2]float64{0.80, 1.05}, [2]float64{2.50, 3.30}, [2]float64{0.18, 0.22},
		[]string{"orbit", "tessera", "halcyon"}, 32768, ""},
	{"gpt-oss-120b", "gpt-oss-120b", 131072, [2]float64{0.05, 0.15}, [2]float64{0.25, 0.60}, [2]float64{0.1, 0.5},
		[]string{"nebula", "orbit", "fathom", "lumen", "tessera", "quarry", "halcyon", "vantage"}, 0, ""},
}

// Result tells what Seed did.
type Result struct {
	Seeded   bool // false when the demo was already there
	Models   int
	Listings int
}

// Seed writes the demo catalogue once; a second call changes nothing.
func Seed(ctx context.Context, st *store.Store) (Result, error) {
	if _, err := st.FindUserByEmail(ctx, Logins[0].Email); err == nil {
		return Result{}, nil
	} else if apperr.Code(err) != apperr.ENOTFOUND {
		return Result{}, fmt.Errorf("seed demo: %w", err)
	}
	// A fixed seed: every demo looks the same, so screenshots and docs agree.
	rng := rand.New(rand.NewPCG(2026, 11))
	users := []account.NewUser{
		{Email: "admin@airside.example", Name: "Ada Admin", Password: Password, Staff: account.StaffAdmin},
		{Email: "reviewer@airside.example", Name: "Rene Reviewer", Password: Password, Staff: account.StaffReviewer},
	}
	carrierIDs := map[string]int64{}
	for _, c := range carriers {
		created, err := st.CreateCarrier(ctx, nil, c.slug, c.name)
		if err != nil {
			return Result{}, fmt.Errorf("seed demo: %w", err)
		}
		carrierIDs[c.slug] = created.ID
	}
	for _, slug := range []string{"nebula", "orbit"} {
		users = append(users,
			account.NewUser{Email: "admin@" + slug + ".example", Name: "Admin of " + slug, Password: Password, CarrierSlug: slug, CarrierRole: account.CarrierAdmin},
			account.NewUser{Email: "member@" + slug + ".example", Name: "Member of " + slug, Password: Password, CarrierSlug: slug, CarrierRole: account.CarrierMember})
	}
	for _, u := range users {
		if _, err := account.NewService(st).CreateUser(ctx, nil, u); err != nil {
			return Result{}, fmt.Errorf("seed demo: %w", err)
		}
	}
	res := Result{Seeded: true}
	for _, m := range models {
		model, err := st.CreateModel(ctx, nil, catalogue.Model{Slug: m.slug, Name: m.name, ContextTokens: m.contextTokens})
		if err != nil {
			return Result{}, fmt.Errorf("seed demo: %w", err)
		}
		res.Models++
		for i, carrier := range m.servedBy {
			listingID, err := st.CreateListing(ctx, nil, carrierIDs[carrier], model.ID)
			if err != nil {
				return Result{}, fmt.Errorf("seed demo: %w", err)
			}
			f := demoFare(rng, m, carrier, i)
			f.Market = demoMarket(m, carrier, i)
			f.ListingID = listingID
			if _, err := st.PublishSeedFare(ctx, f); err != nil {
				return Result{}, fmt.Errorf("seed demo: %w", err)
			}
			if err := st.UpsertHealth(ctx, listingID, demoHealth(rng, i)); err != nil {
				return Result{}, fmt.Errorf("seed demo: %w", err)
			}
			res.Listings++
		}
	}
	return res, nil
}

// between draws a price in [lo, hi] rounded to a tenth of a cent, exactly.
func between(rng *rand.Rand, r [2]float64) money.Micros {
	v := r[0] + rng.Float64()*(r[1]-r[0])
	return money.Micros(int64(v*1000+0.5) * 1000)
}

func ptr[T any](v T) *T { return &v }

func demoFare(rng *rand.Rand, m modelSpec, carrier string, i int) *fare.Fare {
	input := between(rng, m.input)
	f := &fare.Fare{
		Input:        input,
		Output:       between(rng, m.output),
		LandingFee:   money.BasisPoints(1000 + 500*rng.IntN(6)), // 10-35 %
		Discount:     money.BasisPoints(500 * rng.IntN(4)),      // 0-15 %
		CapScope:     fare.ScopeGlobal,
		Capabilities: []election.Capability{election.CapTools, election.CapJSONOutput},
	}
	// Most carriers file a cached price; a few do not, which the preview shows
	// costing them the coding elections.
	if i%4 != 3 {
		share := m.cachedShare[0] + rng.Float64()*(m.cachedShare[1]-m.cachedShare[0])
		f.CachedInput = ptr(input.Scale(int64(share*1000), 1000).Scale(1, 1000).Scale(1000, 1)) // to a tenth of a cent
	}
	if i%3 == 0 {
		f.Capabilities = append(f.Capabilities, election.CapJSONSchema, election.CapReasoning)
	}
	if i%2 == 0 {
		f.MaxRPM = ptr(int64(600 * (1 + rng.IntN(5))))
	}
	if i == 1 {
		f.MaxRPD = ptr(int64(500000))
		f.CapScope = fare.ScopePerOrg
	}
	if m.tierAbove > 0 && i%2 == 0 {
		f.Tiers = []fare.Tier{{AboveTokens: m.tierAbove, Prices: fare.Prices{
			Input: ptr(f.Input * 2), Output: ptr(f.Output.Scale(3, 2)), CachedInput: scaledPtr(f.CachedInput, 2)}}}
	}
	if carrier == m.peakOffPeakOwner {
		// DeepSeek-style: half price off-peak (16:30-00:30 UTC rounded to whole
		// hours), peak otherwise, and whole weekends off-peak in UTC+8.
		eff := time.Date(2026, 8, 16, 16, 0, 0, 0, time.UTC)
		f.TimeBased = &fare.TimeBased{
			EffectiveAt: &eff,
			PeakHours:   []fare.PeakWindow{{Start: 1, End: 16}},
			OffPeakDays: []time.Weekday{time.Saturday, time.Sunday}, UTCOffsetMinutes: 480,
			Peak:    fare.Prices{Input: ptr(f.Input), Output: ptr(f.Output), CachedInput: f.CachedInput},
			OffPeak: fare.Prices{Input: ptr(f.Input / 2), Output: ptr(f.Output / 2), CachedInput: scaledPtr(f.CachedInput, 0.5)},
		}
	}
	return f
}

// demoRegions are where each demo carrier's datacenters are.
var demoRegions = map[string][]string{
	"nebula": {"US"}, "orbit": {"DE", "US"}, "fathom": {"DE"}, "lumen": {"DE", "FR"},
	"tessera": {"US"}, "quarry": {"JP", "US"}, "halcyon": {"SG"}, "vantage": {"CA", "US"},
}

// demoMarket files what a real market shows besides price (election.md
// sec. 7): Fathom is zero data retention, Quarry does not declare its data
// policy, Kimi K2.5 is served in fp8 and bf16, Vantage's DeepSeek V4 Flash
// holds 32k tokens among 128k ones, and Tessera charges a fee per request
// on gpt-oss-120b. No random draw: the fares' prices stay as they were.
func demoMarket(m modelSpec, carrier string, i int) fare.Market {
	out := fare.Market{ContextLength: ptr(m.contextTokens), Regions: demoRegions[carrier], Quantization: "fp8"}
	switch m.slug {
	case "kimi-k2.5":
		out.MaxOutputTokens = ptr(int64(32768))
		if i%2 == 1 {
			out.Quantization = "bf16"
		}
	case "gpt-oss-120b":
		out.Quantization = "fp4"
		if carrier == "tessera" {
			out.RequestPrice = ptr(money.Micros(10)) // $0.00001 a request
		}
	case "deepseek-v4-flash":
		if carrier == "vantage" {
			out.ContextLength = ptr(int64(32768))
		}
	}
	switch carrier {
	case "fathom":
		out.RetentionDays, out.TrainsOnPrompts = ptr(int64(0)), ptr(false)
	case "quarry": // undeclared: counts as keeping and training
	default:
		out.RetentionDays, out.TrainsOnPrompts = ptr(int64(30)), ptr(false)
	}
	return out
}

func scaledPtr(m *money.Micros, by float64) *money.Micros {
	if m == nil {
		return nil
	}
	return ptr(m.Scale(int64(by*100), 100))
}

func demoHealth(rng *rand.Rand, i int) catalogue.Health {
	uptime := 97 + rng.Float64()*2.95
	if i == 2 {
		uptime = 91 + rng.Float64()*3 // one shaky carrier per model: the penalty shows in previews
	}
	return catalogue.Health{
		UptimePct:     ptr(float64(int(uptime*100)) / 100),
		LatencyMs:     ptr(float64(200 + rng.IntN(900))),
		ThroughputTPS: ptr(float64(30 + rng.IntN(160))),
	}
}
