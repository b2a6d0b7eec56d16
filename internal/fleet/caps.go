// Package fleet keeps what a fleet of reference gateways must share in
// Redis (issue 50): the rate-cap windows, so that several replicas enforce
// each cap once; sessions' pins and shapes' incumbents, so that a replica
// routes as the others do. The client is go-redis (github.com/redis/go-redis,
// Redis's own Go client, kept by Redis; it speaks to Valkey too).
package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// Caps counts rate-cap windows in Redis: a key per candidate (or
// organisation) and UTC minute, expiring after 2 minutes, and per UTC day,
// expiring after 25 hours. When Redis cannot be reached it counts in this
// process (Local) and says so once per outage (Log); the caps may then be
// over-served by at most the replicas' count times the cap.
type Caps struct {
	Client *redis.Client
	// Prefix starts every key ("airside:" by default).
	Prefix string
	// Local is this process's count while Redis is away.
	Local traffic.Caps
	// Log is told when Redis goes away and comes back.
	Log func(msg string, err error)
	// Timeout bounds one round trip (default 50 ms): a request does not
	// wait on a Redis that hangs.
	Timeout time.Duration
	link    link
}

// The key families' lifetimes.
const (
	minuteTTL = 2 * time.Minute
	dayTTL    = 25 * time.Hour
)

func (c *Caps) keys(candidate, org string, perOrg bool, now time.Time) (minute, day string) {
	cand, o := traffic.CapKey(candidate, org, perOrg)
	prefix := prefixOr(c.Prefix)
	now = now.UTC()
	// The braces keep both of a counter's windows in one Redis Cluster slot
	// (the reservation script touches both).
	tag := "{" + cand + "|" + o + "}"
	return prefix + "cap:" + tag + ":m:" + strconv.FormatInt(now.Unix()/60, 10),
		prefix + "cap:" + tag + ":d:" + now.Format("20060102")
}

func (c *Caps) ctx() (context.Context, context.CancelFunc) { return timeout(c.Timeout) }

func (c *Caps) failed(err error) { c.link.failed(c.Log, "rate-cap counts", err) }

func (c *Caps) ok() { c.link.ok(c.Log, "rate-cap counts") }

// Down reports whether the last round trip to Redis failed.
func (c *Caps) Down() bool { return c.link.down.Load() }

// Usages are several candidates' counts in their windows, fleet-wide, in
// one round trip (an election reads its whole ballot's).
func (c *Caps) Usages(qs []traffic.CapQuery, now time.Time) []election.Usage {
	keys := make([]string, 0, 2*len(qs))
	for _, q := range qs {
		minute, day := c.keys(q.Candidate, q.Org, q.PerOrg, now)
		keys = append(keys, minute, day)
	}
	out := make([]election.Usage, len(qs))
	if len(qs) == 0 {
		return out
	}
	ctx, cancel := c.ctx()
	defer cancel()
	vals, err := c.Client.MGet(ctx, keys...).Result()
	if err != nil {
		c.failed(err)
		return c.Local.Usages(qs, now)
	}
	c.ok()
	for i := range out {
		out[i] = election.Usage{RPM: count(vals[2*i]), RPD: count(vals[2*i+1])}
	}
	return out
}

func count(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
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
func (c *Caps) Reserve(candidate, org string, perOrg bool, maxRPM, maxRPD *int64, now time.Time) bool {
	minute, day := c.keys(candidate, org, perOrg, now)
	limit := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	n, err := reserve.Run(ctx, c.Client, []string{minute, day}, limit(maxRPM), limit(maxRPD),
		int(minuteTTL/time.Second), int(dayTTL/time.Second)).Int()
	if err != nil {
		c.failed(err)
		return c.Local.Reserve(candidate, org, perOrg, maxRPM, maxRPD, now)
	}
	c.ok()
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
