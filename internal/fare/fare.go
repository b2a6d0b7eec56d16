// Package fare is the vocabulary of what a carrier files for a listing:
// exact prices, tiers, time-of-day blocks, rates, caps and capability flags,
// and their translation into what the election engine ranks.
package fare

import (
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
)

// The fare levers, exactly, in basis points: the engine's one definition.
const (
	BaselineLandingFee = money.BasisPoints(election.BaselineLandingFeeBP)
	MinLandingFee      = money.BasisPoints(election.MinLandingFeeBP)
	MaxLandingFee      = money.BasisPoints(election.MaxLandingFeeBP)
	MaxDiscount        = money.BasisPoints(election.MaxDiscountBP)
	// Unit is one whole (100 %) in basis points.
	Unit = election.BasisPointsPerUnit
)

// CapScope is whether rate caps count all traffic or each organization's.
type CapScope string

// The cap scopes.
const (
	ScopeGlobal CapScope = "global"
	ScopePerOrg CapScope = "per_org"
)

// Prices is a set of optional price overrides (a tier or a time block).
type Prices struct {
	Input, Output, CachedInput *money.Micros
	// Request and Image are fees per request and per image part (USD),
	// overriding the fare's (election.md sec. 7).
	Request, Image *money.Micros
}

// Tier applies its prices to prompts longer than AboveTokens.
type Tier struct {
	AboveTokens int64
	Prices
}

// PeakWindow is a half-open range of UTC hours [Start, End).
type PeakWindow struct{ Start, End int }

// TimeBased holds peak and off-peak prices.
type TimeBased struct {
	EffectiveAt      *time.Time
	PeakHours        []PeakWindow
	OffPeakDays      []time.Weekday
	UTCOffsetMinutes int
	Peak, OffPeak    Prices
}

// Fare is one filed version of a listing's fare.
type Fare struct {
	ID                    int64
	ListingID             int64
	Input, Output         money.Micros
	CachedInput           *money.Micros
	CacheRead, CacheWrite *money.Micros // billed, never ranked
	LandingFee, Discount  money.BasisPoints
	MaxRPM, MaxRPD        *int64
	CapScope              CapScope
	Capabilities          []election.Capability // declared by the carrier
	Tiers                 []Tier
	TimeBased             *TimeBased
	// Market is what the listing offers besides price (sec. 7).
	Market
	CreatedBy int64
	CreatedAt time.Time
}

// FormatCapabilities stores declared flags as a comma-separated list.
func FormatCapabilities(flags []election.Capability) string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = f.String()
	}
	return strings.Join(names, ",")
}

// ParseCapabilities reads FormatCapabilities' output, skipping unknown names.
func ParseCapabilities(s string) []election.Capability {
	var flags []election.Capability
	for _, name := range strings.Split(s, ",") {
		if c, ok := election.ParseCapability(strings.TrimSpace(name)); ok {
			flags = append(flags, c)
		}
	}
	return flags
}

func ptrFloat(m *money.Micros) *float64 {
	if m == nil {
		return nil
	}
	v := m.Float()
	return &v
}

func (p Prices) forElection() election.PriceBlock {
	out := election.PriceBlock{Input: ptrFloat(p.Input), Output: ptrFloat(p.Output), CachedInput: ptrFloat(p.CachedInput)}
	if p.Request != nil || p.Image != nil {
		out.Fees = &election.FeeBlock{Request: ptrFloat(p.Request), Image: ptrFloat(p.Image)}
	}
	return out
}

// ForElection converts the exact fare to what the engine ranks.
func (f *Fare) ForElection() election.Fare {
	lf := f.LandingFee.Fraction()
	out := election.Fare{
		Input:          f.Input.Float(),
		Output:         f.Output.Float(),
		CachedInput:    ptrFloat(f.CachedInput),
		CacheReadInput: ptrFloat(f.CacheRead),
		Discount:       f.Discount.Fraction(),
		LandingFee:     &lf,
		MaxRPM:         f.MaxRPM,
		MaxRPD:         f.MaxRPD,
	}
	f.Market.forElection(&out)
	for _, t := range f.Tiers {
		out.Tiers = append(out.Tiers, election.Tier{AboveTokens: t.AboveTokens, PriceBlock: t.forElection()})
	}
	if tb := f.TimeBased; tb != nil {
		block := &election.TimeBased{Peak: tb.Peak.forElection(), OffPeak: tb.OffPeak.forElection()}
		if tb.EffectiveAt != nil {
			block.EffectiveAt = *tb.EffectiveAt
		}
		for _, w := range tb.PeakHours {
			block.PeakHours = append(block.PeakHours, election.PeakWindow{Start: w.Start, End: w.End})
		}
		if len(tb.OffPeakDays) > 0 {
			days := &election.OffPeakDays{UTCOffsetMinutes: tb.UTCOffsetMinutes}
			for _, d := range tb.OffPeakDays {
				days.Days |= 1 << uint(d)
			}
			block.OffPeakDays = days
		}
		out.TimeBased = block
	}
	return out
}

// KeptPerDollar is the share of every filed dollar the carrier keeps, in
// basis points, exactly: (1 - discount) x (1 - landing fee).
func (f *Fare) KeptPerDollar() money.BasisPoints {
	return money.BasisPoints((Unit - int64(f.Discount)) * (Unit - int64(f.LandingFee)) / Unit)
}

// Effective is a filed price as routing ranks it, exactly (rounded to the
// micro-dollar): filed x (1 - discount) x (1 + 0.20 - landing fee).
func (f *Fare) Effective(filed money.Micros) money.Micros {
	return filed.Scale((Unit-int64(f.Discount))*(Unit+int64(BaselineLandingFee)-int64(f.LandingFee)), Unit*Unit)
}

// The form's hints on the levers, from the constants above.
var (
	LandingFeeHint = fmt.Sprintf("%s-%s %%; the baseline %s %% leaves your routing price as filed. Each point above it is a point off your routing price.",
		MinLandingFee.Percent(), MaxLandingFee.Percent(), BaselineLandingFee.Percent())
	DiscountHint = fmt.Sprintf("0-%s %%; lowers what developers pay and your routing price.", MaxDiscount.Percent())
)
