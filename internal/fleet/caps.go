// Package fleet keeps what a fleet of reference gateways shares in Redis
// (issue 50): the rate-cap windows, so that several replicas enforce each
// cap once; sessions' pins and shapes' incumbents, so that every replica
// routes a session and a shape alike; the limits that opened (429 and
// latency backoff, the breaker), so that one replica's burst of 429s holds
// the listing back fleet-wide. A request reads all of it in one round trip
// (State.Read). The client is go-redis (github.com/redis/go-redis, Redis's
// own Go client, kept by Redis; it speaks to Valkey too).
package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/traffic"
)

// The key families' lifetimes.
const (
	minuteTTL = 2 * time.Minute
	dayTTL    = 25 * time.Hour
	// IncumbentTTL is how long a shape's incumbent is kept after its last
	// election: a shape nobody asked for in a day starts afresh.
	IncumbentTTL = 24 * time.Hour
)

func (s *State) prefix() string {
	if s.Prefix == "" {
		return "airside:"
	}
	return s.Prefix
}

// capKeys name a counter's two windows. The braces keep both in one Redis
// Cluster slot (the reservation script touches both).
func (s *State) capKeys(candidate, org string, perOrg bool, now time.Time) (minute, day string) {
	cand, o := traffic.CapKey(candidate, org, perOrg)
	now = now.UTC()
	tag := "{" + cand + "|" + o + "}"
	return s.prefix() + "cap:" + tag + ":m:" + strconv.FormatInt(now.Unix()/60, 10),
		s.prefix() + "cap:" + tag + ":d:" + now.Format("20060102")
}

// sessionKey names a session's pin; lengths first, so a project, model or
// id holding ":" cannot collide with another.
func (s *State) sessionKey(k traffic.SessionKey) string {
	return s.prefix() + "session:" + strconv.Itoa(len(k.Project)) + ":" + strconv.Itoa(len(k.Model)) + ":" +
		k.Project + k.Model + k.ID
}

// incumbentKey names a shape's incumbent.
func (s *State) incumbentKey(sh traffic.Shape) string {
	cache := "0"
	if sh.CacheRelevant {
		cache = "1"
	}
	return s.prefix() + "incumbent:" + strconv.Itoa(int(sh.Mode)) + ":" + strconv.Itoa(int(sh.Workload)) + ":" + cache + ":" + sh.Model
}

// limitKey names an open limit of a listing; its value is when it ends
// (Unix milliseconds), and it expires then.
func (s *State) limitKey(limit traffic.Limit, listing string) string {
	return s.prefix() + "limit:" + string(limit) + ":" + listing
}

// reserve increments both windows only if neither cap is reached: one
// script, so the fleet's replicas cannot both take a cap's last place.
var reserve = redis.NewScript(`
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local d = tonumber(redis.call('GET', KEYS[2]) or '0')
if (ARGV[1] ~= '' and m >= tonumber(ARGV[1])) or (ARGV[2] ~= '' and d >= tonumber(ARGV[2])) then
  return 0
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
`)

// Reserve counts one request to a candidate if its caps leave room,
// fleet-wide, and reports whether they did.
func (s *State) Reserve(candidate, org string, perOrg bool, maxRPM, maxRPD *int64, now time.Time) bool {
	if s.Client == nil {
		return s.local.caps.Reserve(candidate, org, perOrg, maxRPM, maxRPD, now)
	}
	minute, day := s.capKeys(candidate, org, perOrg, now)
	limit := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := reserve.Run(ctx, s.Client, []string{minute, day}, limit(maxRPM), limit(maxRPD),
		int(minuteTTL/time.Second), int(dayTTL/time.Second)).Int()
	if err != nil {
		s.failed(err)
		return s.local.caps.Reserve(candidate, org, perOrg, maxRPM, maxRPD, now)
	}
	s.ok()
	return n == 1
}

// Dial connects to the Redis a URL names (redis://host:port/db) and checks
// it answers.
func Dial(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil && !errors.Is(err, redis.Nil) {
		client.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	return client, nil
}
