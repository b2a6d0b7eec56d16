package election

import (
	"fmt"
	"strconv"
)

// The uptime lines, in percent: the one home of both numbers. Under
// PenaltyUptime a candidate's score carries UptimePenalty; under
// StableUptime an incumbent loses its stable preference (its sessions and
// its shapes move to the best score). Alerts, incidents, charts and every
// page that names a line read them here.
const (
	PenaltyUptime = 95.0
	StableUptime  = 85.0
)

// The sentences a person reads about the thresholds, built from the
// constants so that changing a number changes every page that states it
// (a test renders the pages and finds these values in them).
var (
	// RoutingPriceFormula is how a filed price becomes what routing ranks.
	RoutingPriceFormula = fmt.Sprintf("filed x (1 - discount) x (1 + %s - landing fee)", fraction2(BaselineLandingFee))
	// KeptFormula is the share of a filed dollar the carrier keeps.
	KeptFormula = "(1 - discount) x (1 - landing fee)"
	// LandingFeeBounds names the landing fee's range and baseline.
	LandingFeeBounds = fmt.Sprintf("%s-%s %% (baseline %s %%)", bpPercent(MinLandingFeeBP), bpPercent(MaxLandingFeeBP), bpPercent(BaselineLandingFeeBP))
	// DiscountBounds names the discount's range.
	DiscountBounds = fmt.Sprintf("0-%s %%", bpPercent(MaxDiscountBP))
	// UptimePenaltyRule states the penalty with two worked values.
	UptimePenaltyRule = fmt.Sprintf("under %s %% uptime the score carries a penalty of ((%s - uptime) / %s x 5)², %s at 90 %%, %s at 80 %%",
		Percent(PenaltyUptime), Percent(PenaltyUptime), Percent(PenaltyUptime), fraction3(UptimePenalty(90)), fraction2(UptimePenalty(80)))
	// StablePreferenceRule states when the incumbent keeps its traffic.
	StablePreferenceRule = fmt.Sprintf("the gateway stays with a workload's current winner unless another candidate's score leads it by more than %s, or its uptime falls under %s %%",
		fraction2(IncumbentMargin), Percent(StableUptime))
)

// Percent writes a percentage without trailing zeros: 95, 87.5.
func Percent(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func bpPercent(bp int) string { return Percent(float64(bp) / 100) }

func fraction2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
func fraction3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
