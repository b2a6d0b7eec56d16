package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/traffic"
)

// hoursTTL keeps an hour's aggregates for the learned window and the hour
// being learned from.
const hoursTTL = traffic.LearnedWindow + 2*time.Hour

// hoursKey names a project's hour of a model: a hash whose fields are
// "<replica>|<listing>", each one replica's own running totals, so a
// replica rewrites its figures (a retry or a lost write changes nothing)
// and a reader adds the replicas up.
func (s *State) hoursKey(project, model string, hour time.Time) string {
	return s.prefix() + "hours:" + strconv.Itoa(len(project)) + ":" + project + model + ":" + strconv.FormatInt(hour.UTC().Unix()/3600, 10)
}

// ProjectHours is a project's hourly aggregates of a model, as a replica
// counted them.
type ProjectHours struct {
	Project, Model string
	Hours          []traffic.Hour
}

// PublishHours writes this replica's running totals of the hours given
// (the gateway sends those that changed), in one round trip.
func (s *State) PublishHours(replica string, all []ProjectHours) error {
	if s.Client == nil || len(all) == 0 {
		return nil
	}
	ctx, cancel := s.ctxFor(time.Second)
	defer cancel()
	pipe := s.Client.Pipeline()
	for _, ph := range all {
		fields := map[string][]any{}
		for _, h := range ph.Hours {
			key := s.hoursKey(ph.Project, ph.Model, h.Start)
			fields[key] = append(fields[key], replica+"|"+h.Candidate, encodeHour(h))
		}
		for key, values := range fields {
			pipe.HSet(ctx, key, values...)
			pipe.Expire(ctx, key, hoursTTL)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.failed(err)
		return fmt.Errorf("publish learned hours: %w", err)
	}
	s.ok()
	return nil
}

// Hours is the fleet's hourly aggregates of a project's model over the
// learned window (every replica's added up), in one round trip; false
// when Redis could not be read.
func (s *State) Hours(project, model string, now time.Time) ([]traffic.Hour, bool) {
	if s.Client == nil {
		return nil, false
	}
	ctx, cancel := s.ctx()
	defer cancel()
	pipe := s.Client.Pipeline()
	first := now.Add(-traffic.LearnedWindow).UTC().Truncate(time.Hour)
	var cmds []*redis.MapStringStringCmd
	var starts []time.Time
	for h := first; !h.After(now); h = h.Add(time.Hour) {
		cmds = append(cmds, pipe.HGetAll(ctx, s.hoursKey(project, model, h)))
		starts = append(starts, h)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		s.failed(err)
		return nil, false
	}
	s.ok()
	var out []traffic.Hour
	for i, cmd := range cmds {
		by := map[string]*traffic.Hour{}
		for field, value := range cmd.Val() {
			_, candidate, ok := strings.Cut(field, "|")
			h, err := decodeHour(value)
			if !ok || err != nil {
				continue
			}
			sum := by[candidate]
			if sum == nil {
				sum = &traffic.Hour{Start: starts[i], Candidate: candidate}
				by[candidate] = sum
			}
			sum.Successes += h.Successes
			sum.InputTokens += h.InputTokens
			sum.CachedInputTokens += h.CachedInputTokens
			sum.OutputTokens += h.OutputTokens
			sum.ResponseCacheHits += h.ResponseCacheHits
		}
		for _, h := range by {
			out = append(out, *h)
		}
	}
	return out, true
}

func encodeHour(h traffic.Hour) string {
	return fmt.Sprintf("%d,%d,%d,%d,%d", h.Successes, h.InputTokens, h.CachedInputTokens, h.OutputTokens, h.ResponseCacheHits)
}

func decodeHour(v string) (traffic.Hour, error) {
	var h traffic.Hour
	_, err := fmt.Sscanf(v, "%d,%d,%d,%d,%d", &h.Successes, &h.InputTokens, &h.CachedInputTokens, &h.OutputTokens, &h.ResponseCacheHits)
	return h, err
}
