package fleet

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// State is what a replica shares with the fleet in Redis; without a Client
// it is this replica's alone (the gateway's default). When Redis does
// not answer within Timeout it keeps this replica's own state (caps,
// sessions, incumbents) and says so once per outage (Log); meanwhile a cap
// may be over-served by at most the replicas' count times the cap, and a
// session or shape may be routed differently by different replicas.
type State struct {
	Client *redis.Client
	// Prefix starts every key ("airside:" by default).
	Prefix string
	// Log is told when Redis goes away and comes back.
	Log func(msg string, err error)
	// Timeout bounds one round trip (default 50 ms): a request does not
	// wait on a Redis that hangs.
	Timeout time.Duration

	local struct {
		caps       traffic.Caps
		sessions   traffic.Sessions
		incumbents traffic.Incumbents
	}
	down atomic.Bool
}

func (s *State) ctx() (context.Context, context.CancelFunc) {
	d := s.Timeout
	if d <= 0 {
		d = 50 * time.Millisecond
	}
	return context.WithTimeout(context.Background(), d)
}

// ctxFor bounds a background round trip (no request waits on it).
func (s *State) ctxFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), max(d, s.Timeout))
}

// failed records an outage, said once.
func (s *State) failed(err error) {
	if !s.down.Swap(true) && s.Log != nil {
		s.Log("redis unreachable: rate caps, sessions, incumbents and limits are this replica's own until it is back", err)
	}
}

func (s *State) ok() {
	if s.down.Swap(false) && s.Log != nil {
		s.Log("redis is back: rate caps, sessions, incumbents and limits are shared with the fleet again", nil)
	}
}

// Sessions is how many sessions this replica remembers itself (all of
// them without Redis; those pinned while Redis was away with it).
func (s *State) Sessions() int { return s.local.sessions.Len() }

// Down reports whether the last round trip to Redis failed.
func (s *State) Down() bool { return s.down.Load() }

// Query is what a request's plan needs to know of the fleet.
type Query struct {
	// Caps are the ballot's counters; Limits reads the same candidates'
	// open limits.
	Caps []traffic.CapQuery
	// Session is the request's session, if it names one.
	Session *traffic.SessionKey
	// Shapes are the shapes whose incumbents the plan may need (a
	// session's request is of one of two, known once its pin is read).
	Shapes []traffic.Shape
}

// View is the fleet's state for one request.
type View struct {
	Usages []election.Usage
	// Held are the candidates' limits opened anywhere in the fleet (in
	// Query.Caps's order): Backoff, Slow and an open Breaker.
	Held []election.State
	// Pin is the session's listing and region, if it is open.
	Pin  traffic.SessionPin
	Open bool
	// incumbents by Query.Shapes's index.
	incumbents []string
	shapes     []traffic.Shape
	// Local: Redis was away, and the view is this replica's.
	Local bool
}

// Incumbent is a shape's incumbent as read ("" when it has none or was
// not asked for).
func (v *View) Incumbent(sh traffic.Shape) string {
	for i, s := range v.shapes {
		if s == sh {
			return v.incumbents[i]
		}
	}
	return ""
}

var fleetLimits = [...]traffic.Limit{traffic.LimitBackoff, traffic.LimitSlow, traffic.LimitBreaker}

// Read is everything a request's plan needs of the fleet, in one round
// trip: the ballot's cap counts and open limits in one MGET, the session's
// pin, the shapes' incumbents (GETEX, renewing their lifetime).
func (s *State) Read(q Query, now time.Time) View {
	if s.Client == nil {
		return s.localView(q, now)
	}
	keys := make([]string, 0, (2+len(fleetLimits))*len(q.Caps))
	for _, c := range q.Caps {
		minute, day := s.capKeys(c.Candidate, c.Org, c.PerOrg, now)
		keys = append(keys, minute, day)
	}
	for _, c := range q.Caps {
		for _, l := range fleetLimits {
			keys = append(keys, s.limitKey(l, c.Candidate))
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	pipe := s.Client.Pipeline()
	var counts *redis.SliceCmd
	if len(keys) > 0 {
		counts = pipe.MGet(ctx, keys...)
	}
	var pin *redis.StringCmd
	if q.Session != nil {
		pin = pipe.Get(ctx, s.sessionKey(*q.Session))
	}
	incumbents := make([]*redis.StringCmd, len(q.Shapes))
	for i, sh := range q.Shapes {
		incumbents[i] = pipe.GetEx(ctx, s.incumbentKey(sh), IncumbentTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		s.failed(err)
		return s.localView(q, now)
	}
	s.ok()
	v := View{Usages: make([]election.Usage, len(q.Caps)), Held: make([]election.State, len(q.Caps)), shapes: q.Shapes,
		incumbents: make([]string, len(q.Shapes))}
	if counts != nil {
		vals := counts.Val()
		for i := range q.Caps {
			v.Usages[i] = election.Usage{RPM: count(vals[2*i]), RPD: count(vals[2*i+1])}
			at := 2*len(q.Caps) + len(fleetLimits)*i
			v.Held[i] = election.State{Backoff: openAt(vals[at], now), Slow: openAt(vals[at+1], now)}
			if openAt(vals[at+2], now) {
				v.Held[i].Breaker = election.BreakerOpen
			}
		}
	}
	if pin != nil {
		if p, err := pin.Result(); err == nil {
			v.Pin, v.Open = decodePin(p), true
		} else {
			v.Pin, v.Open = s.local.sessions.Pinned(*q.Session, now) // pinned here while Redis was away
		}
	}
	for i, cmd := range incumbents {
		v.incumbents[i] = cmd.Val()
	}
	return v
}

// localView is this replica's state, while Redis is away.
func (s *State) localView(q Query, now time.Time) View {
	v := View{Usages: s.local.caps.Usages(q.Caps, now), Held: make([]election.State, len(q.Caps)), shapes: q.Shapes,
		incumbents: make([]string, len(q.Shapes)), Local: true}
	if q.Session != nil {
		v.Pin, v.Open = s.local.sessions.Pinned(*q.Session, now)
	}
	for i, sh := range q.Shapes {
		v.incumbents[i] = s.local.incumbents.Of(sh)
	}
	return v
}

// A session's value in Redis is its listing, then a tab and its region
// when it has one (listing ids hold no tab).
func encodePin(p traffic.SessionPin) string {
	if p.Region == "" {
		return p.Listing
	}
	return p.Listing + "\t" + p.Region
}

func decodePin(v string) traffic.SessionPin {
	listing, region, _ := strings.Cut(v, "\t")
	return traffic.SessionPin{Listing: listing, Region: region}
}

func count(v any) int64 {
	str, _ := v.(string)
	n, _ := strconv.ParseInt(str, 10, 64)
	return n
}

// openAt reads a limit's end (Unix milliseconds) and reports whether it is
// still open (the key expires then; a clock a little ahead of Redis's
// must not keep it).
func openAt(v any, now time.Time) bool {
	str, ok := v.(string)
	if !ok {
		return false
	}
	ms, err := strconv.ParseInt(str, 10, 64)
	return err == nil && now.UnixMilli() < ms
}

// Pin pins a session to a listing and region and marks it used now: its
// key lives traffic.SessionIdle from its last request.
func (s *State) Pin(k traffic.SessionKey, pin traffic.SessionPin, now time.Time) {
	if s.Client == nil {
		s.local.sessions.Pin(k, pin, now)
		return
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.Client.Set(ctx, s.sessionKey(k), encodePin(pin), traffic.SessionIdle).Err(); err != nil {
		s.failed(err)
		s.local.sessions.Pin(k, pin, now)
		return
	}
	s.ok()
}

// Hold applies a shape's election to the incumbent the view read
// (traffic.HoldAfter, the rule a replica alone follows) and writes the
// incumbent only when it changes. It returns the candidate that serves
// the request and the shape's incumbent after it ("" for none): an
// incumbent a 429 backoff or the breaker holds back keeps the shape while
// the winner serves. Two replicas electing a shape at once may both write:
// the last write stands, and both were the shape's rightful holder at the
// time.
func (s *State) Hold(sh traffic.Shape, v *View, b *election.Ballot, res *election.Result) (int, string) {
	if v.Local {
		return s.holdLocally(sh, b, res)
	}
	incumbent := v.Incumbent(sh)
	i, next := traffic.HoldAfter(incumbent, b, res)
	if next == "" {
		return i, incumbent
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.Client.Set(ctx, s.incumbentKey(sh), next, IncumbentTTL).Err(); err != nil {
		s.failed(err)
		return s.holdLocally(sh, b, res)
	}
	s.ok()
	return i, next
}

// holdLocally is Hold on the replica's own incumbents.
func (s *State) holdLocally(sh traffic.Shape, b *election.Ballot, res *election.Result) (int, string) {
	i := s.local.incumbents.Hold(sh, b, res)
	return i, s.local.incumbents.Of(sh)
}

// Limited shares a limit acting on a listing: an opening holds it back on
// every replica until the limit's end, a closing of the breaker lets it
// in again at once. The replica that saw it keeps the limit's own state
// (its windows, its half-open probes); the others only hold it back.
func (s *State) Limited(e traffic.Event) {
	if s.Client == nil {
		return // the replica's own limits hold it
	}
	ctx, cancel := s.ctx()
	defer cancel()
	key := s.limitKey(e.Limit, e.Listing)
	var err error
	switch {
	case e.Opened && e.Until.After(e.At):
		err = s.Client.Set(ctx, key, strconv.FormatInt(e.Until.UnixMilli(), 10), e.Until.Sub(e.At)).Err()
	case !e.Opened:
		err = s.Client.Del(ctx, key).Err()
	}
	if err != nil {
		s.failed(err)
		return
	}
	s.ok()
}
