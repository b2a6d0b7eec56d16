package fleet

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// IncumbentTTL is how long a shape's incumbent is kept after its last
// election: a shape nobody asked for in a day starts afresh.
const IncumbentTTL = 24 * time.Hour

// link is what each shared state does when Redis does not answer: say so
// once per outage, keep this process's state meanwhile.
type link struct {
	down atomic.Bool
}

func (l *link) failed(log func(string, error), what string, err error) {
	if !l.down.Swap(true) && log != nil {
		log("redis unreachable: keeping "+what+" in this replica until it is back", err)
	}
}

func (l *link) ok(log func(string, error), what string) {
	if l.down.Swap(false) && log != nil {
		log("redis is back: "+what+" are shared with the fleet again", nil)
	}
}

func timeout(d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = 50 * time.Millisecond
	}
	return context.WithTimeout(context.Background(), d)
}

func prefixOr(p string) string {
	if p == "" {
		return "airside:"
	}
	return p
}

// Sessions pins each session to its listing in Redis, so a session opened
// on one replica continues on another: one key per session, expiring
// traffic.SessionIdle after its last request (SET with EX on each pin).
// While Redis is away, Local pins.
type Sessions struct {
	Client  *redis.Client
	Prefix  string
	Local   traffic.Sessions
	Log     func(msg string, err error)
	Timeout time.Duration
	link    link
}

func (s *Sessions) key(k traffic.SessionKey) string {
	// Lengths first: a project, model or id holding ":" cannot collide.
	return prefixOr(s.Prefix) + "session:" + strconv.Itoa(len(k.Project)) + ":" + strconv.Itoa(len(k.Model)) + ":" +
		k.Project + k.Model + k.ID
}

// Down reports whether the last round trip to Redis failed.
func (s *Sessions) Down() bool { return s.link.down.Load() }

// Pinned is the listing a session is pinned to, if it is open.
func (s *Sessions) Pinned(k traffic.SessionKey, now time.Time) (string, bool) {
	ctx, cancel := timeout(s.Timeout)
	defer cancel()
	v, err := s.Client.Get(ctx, s.key(k)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		s.link.ok(s.Log, "sessions")
		return s.Local.Pinned(k, now) // pinned here while Redis was away
	case err != nil:
		s.link.failed(s.Log, "sessions", err)
		return s.Local.Pinned(k, now)
	}
	s.link.ok(s.Log, "sessions")
	return v, true
}

// Pin pins a session to a listing and marks it used now.
func (s *Sessions) Pin(k traffic.SessionKey, candidate string, now time.Time) {
	ctx, cancel := timeout(s.Timeout)
	defer cancel()
	if err := s.Client.Set(ctx, s.key(k), candidate, traffic.SessionIdle).Err(); err != nil {
		s.link.failed(s.Log, "sessions", err)
		s.Local.Pin(k, candidate, now)
		return
	}
	s.link.ok(s.Log, "sessions")
}

// Incumbents keeps each shape's incumbent in Redis, so every replica routes
// a shape to the same listing (by traffic.HoldAfter, the rule a replica
// alone follows): one key per shape, its lifetime renewed by each election
// (GETEX), written only when the incumbent changes. Two replicas electing a
// shape at once may both write; the last write stands, and both were the
// shape's rightful holder at the time. While Redis is away, Local keeps them.
type Incumbents struct {
	Client  *redis.Client
	Prefix  string
	Local   traffic.Incumbents
	Log     func(msg string, err error)
	Timeout time.Duration
	link    link
}

func (in *Incumbents) key(s traffic.Shape) string {
	cache := "0"
	if s.CacheRelevant {
		cache = "1"
	}
	return prefixOr(in.Prefix) + "incumbent:" + strconv.Itoa(int(s.Mode)) + ":" + strconv.Itoa(int(s.Workload)) + ":" + cache + ":" + s.Model
}

// Down reports whether the last round trip to Redis failed.
func (in *Incumbents) Down() bool { return in.link.down.Load() }

// Of is a shape's incumbent ("" when it has none).
func (in *Incumbents) Of(s traffic.Shape) string {
	ctx, cancel := timeout(in.Timeout)
	defer cancel()
	v, err := in.Client.Get(ctx, in.key(s)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		in.link.failed(in.Log, "incumbents", err)
		return in.Local.Of(s)
	}
	in.link.ok(in.Log, "incumbents")
	return v
}

// Hold applies the shape's election to its incumbent and returns the
// holder's index.
func (in *Incumbents) Hold(s traffic.Shape, b *election.Ballot, res *election.Result) int {
	ctx, cancel := timeout(in.Timeout)
	defer cancel()
	key := in.key(s)
	incumbent, err := in.Client.GetEx(ctx, key, IncumbentTTL).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		in.link.failed(in.Log, "incumbents", err)
		return in.Local.Hold(s, b, res)
	}
	i, next := traffic.HoldAfter(incumbent, b, res)
	if next != "" {
		if err := in.Client.Set(ctx, key, next, IncumbentTTL).Err(); err != nil {
			in.link.failed(in.Log, "incumbents", err)
			return in.Local.Hold(s, b, res)
		}
	}
	in.link.ok(in.Log, "incumbents")
	return i
}
