package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// CachedAnswer is a response-cache entry: the answer and the listing that
// gave it.
type CachedAnswer struct {
	Answer      []byte
	ListingSlug string
	ListingID   int64
}

// The response cache's keys: one string per answer, its size under its
// name in a sorted set by when it was kept (the eviction order), and the
// bytes kept in all.
func (s *State) answerKey(key string) string { return s.prefix() + "resp:a:" + key }
func (s *State) answerIndex() string         { return s.prefix() + "resp:index" }
func (s *State) answerBytes() string         { return s.prefix() + "resp:bytes" }

// keepAnswer stores an answer for its TTL and, past the byte bound, drops
// the oldest answers (and those expired) from the index and the count: one
// script, so replicas keeping answers at once keep the count exact.
var keepAnswer = redis.NewScript(`
local size = tonumber(ARGV[2])
local member = ARGV[5]
local old = redis.call('ZSCORE', KEYS[2], member)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
if not old then
  redis.call('ZADD', KEYS[2], ARGV[4], member)
  redis.call('INCRBY', KEYS[3], size)
end
local now, ttl, limit = tonumber(ARGV[4]), tonumber(ARGV[3]), tonumber(ARGV[6])
local function drop(m)
  local sep = string.find(m, '|', 1, true)
  redis.call('DEL', ARGV[7] .. string.sub(m, 1, sep - 1))
  redis.call('DECRBY', KEYS[3], tonumber(string.sub(m, sep + 1)))
  redis.call('ZREM', KEYS[2], m)
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl, 'LIMIT', 0, 64)) do drop(m) end
while tonumber(redis.call('GET', KEYS[3]) or '0') > limit do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
end
return 1
`)

// CacheAnswer keeps an answer under key for ttl in the fleet's response
// cache, whose answers are bounded to maxBytes in all (the oldest go).
func (s *State) CacheAnswer(key string, a CachedAnswer, ttl time.Duration, maxBytes int64) error {
	if s.Client == nil {
		return errors.New("no fleet")
	}
	value := fmt.Appendf(nil, "%d\n%s\n", a.ListingID, a.ListingSlug)
	value = append(value, a.Answer...)
	ctx, cancel := s.ctx()
	defer cancel()
	member := key + "|" + strconv.Itoa(len(value))
	err := keepAnswer.Run(ctx, s.Client, []string{s.answerKey(key), s.answerIndex(), s.answerBytes()},
		value, len(value), ttl.Milliseconds(), time.Now().UnixMilli(), member, maxBytes, s.prefix()+"resp:a:").Err()
	if err != nil {
		s.failed(err)
		return err
	}
	s.ok()
	return nil
}

// CachedAnswer is the fleet's answer kept under key, if any; err when Redis
// could not be read.
func (s *State) CachedAnswer(key string) (CachedAnswer, bool, error) {
	if s.Client == nil {
		return CachedAnswer{}, false, errors.New("no fleet")
	}
	ctx, cancel := s.ctx()
	defer cancel()
	v, err := s.Client.Get(ctx, s.answerKey(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		s.ok()
		return CachedAnswer{}, false, nil
	}
	if err != nil {
		s.failed(err)
		return CachedAnswer{}, false, err
	}
	s.ok()
	id, rest, ok1 := bytes.Cut(v, []byte("\n"))
	slug, answer, ok2 := bytes.Cut(rest, []byte("\n"))
	listing, perr := strconv.ParseInt(string(id), 10, 64)
	if !ok1 || !ok2 || perr != nil {
		return CachedAnswer{}, false, nil
	}
	return CachedAnswer{Answer: answer, ListingSlug: string(slug), ListingID: listing}, true, nil
}

// AnswerBytes is the size of the answers the fleet's cache holds.
func (s *State) AnswerBytes() (int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := s.Client.Get(ctx, s.answerBytes()).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}
