package traffic

import (
	"sync"
	"time"

	"github.com/airside/airside/internal/election"
)

// Caps counts the requests each listing served in the current UTC minute
// and day, globally and per organisation, for its rate caps (maxRpm,
// maxRpd). Safe for concurrent use.
type Caps struct {
	mu     sync.Mutex
	minute time.Time
	day    time.Time
	rpm    map[capKey]int64
	rpd    map[capKey]int64
}

type capKey struct {
	candidate, org string
}

// roll starts new windows when now has left the current ones.
func (c *Caps) roll(now time.Time) {
	now = now.UTC()
	if m := now.Truncate(time.Minute); !m.Equal(c.minute) {
		c.minute, c.rpm = m, map[capKey]int64{}
	}
	if d := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC); !d.Equal(c.day) {
		c.day, c.rpd = d, map[capKey]int64{}
	}
}

// key is the counter a request falls in: the organisation's own for a
// per-organisation cap, else the listing's global one.
func key(candidate, org string, perOrg bool) capKey {
	if !perOrg {
		org = ""
	}
	return capKey{candidate: candidate, org: org}
}

// Usage is a candidate's count in its windows as the election reads it.
func (c *Caps) Usage(candidate, org string, perOrg bool, now time.Time) election.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	k := key(candidate, org, perOrg)
	return election.Usage{RPM: c.rpm[k], RPD: c.rpd[k]}
}

// Take counts one request sent to a candidate. It is counted whatever the
// answer: a cap bounds what the carrier is asked to serve.
func (c *Caps) Take(candidate, org string, perOrg bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	k := key(candidate, org, perOrg)
	c.rpm[k]++
	c.rpd[k]++
}

// Reserve counts one request to a candidate if its caps (nil: none) leave
// room in both windows, all at once, and reports whether they did: two
// requests racing for a cap's last place cannot both have it.
func (c *Caps) Reserve(candidate, org string, perOrg bool, maxRPM, maxRPD *int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	k := key(candidate, org, perOrg)
	if maxRPM != nil && c.rpm[k] >= *maxRPM || maxRPD != nil && c.rpd[k] >= *maxRPD {
		return false
	}
	c.rpm[k]++
	c.rpd[k]++
	return true
}

// CapKey names a candidate's counter: the organisation's own for a
// per-organisation cap, else the listing's global one.
func CapKey(candidate, org string, perOrg bool) (string, string) {
	k := key(candidate, org, perOrg)
	return k.candidate, k.org
}

// CapQuery names a candidate's counter for Usages.
type CapQuery struct {
	Candidate, Org string
	PerOrg         bool
}

// Usages are several candidates' counts at once (one election's ballot).
func (c *Caps) Usages(qs []CapQuery, now time.Time) []election.Usage {
	out := make([]election.Usage, len(qs))
	for i, q := range qs {
		out[i] = c.Usage(q.Candidate, q.Org, q.PerOrg, now)
	}
	return out
}
