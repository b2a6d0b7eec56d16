package catalogue

import "time"

// Live is where a listing stands for routing right now, as the on-call
// view shows it: its status, an open maintenance window, and what the
// gateways' limits reported (LimitSpells).
type Live struct {
	// State is "serving", "breaker", "backoff", "slow", "maintenance",
	// "paused", "draft" or "delisted".
	State string
	// Since is when the state began, where known; Until when it is planned
	// to end (a maintenance window).
	Since, Until *time.Time
}

// RecentBackoff is how recently a backoff must have started for the
// listing to count as backed off now: a gateway's backoff lasts seconds to
// a minute (election.md sec. 8), reported per minute.
const RecentBackoff = 2 * time.Minute

// LiveOf is a listing's live state at now from its status, the end of the
// maintenance window under way (nil: none) and its limit spells, oldest
// first. A breaker not reported closed outranks a backoff; a listing in
// service with neither is serving.
func LiveOf(status ListingStatus, maintenanceUntil *time.Time, spells []LimitSpell, now time.Time) Live {
	switch status {
	case StatusDelisted:
		return Live{State: "delisted"}
	case StatusDraft:
		return Live{State: "draft"}
	case StatusPaused:
		if maintenanceUntil != nil {
			return Live{State: "maintenance", Until: maintenanceUntil}
		}
		return Live{State: "paused"}
	}
	var backoff *LimitSpell
	for i := range spells {
		s := &spells[i]
		switch {
		case s.Limit == "breaker" && s.Until == nil:
			from := s.From
			return Live{State: "breaker", Since: &from}
		case s.Limit != "breaker" && s.Until != nil && now.Sub(*s.Until) < RecentBackoff:
			backoff = s
		}
	}
	if backoff != nil {
		from := backoff.From
		return Live{State: backoff.Limit, Since: &from}
	}
	return Live{State: "serving"}
}

// Recent is what the on-call view reads of a listing from the gateways'
// reports: the counts of the last window, and the minutes their limits
// acted in the last day, every gateway's part summed (for LimitSpells).
type Recent struct {
	Window       Counts
	LimitMinutes []Bucket
}
