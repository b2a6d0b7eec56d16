package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/airside/airside/internal/fleet"
)

// ResponseCache answers a project's exact repeat of a non-streamed request
// from the gateway itself, for TTL. It is off unless configured: its point
// here is the learned-rate rule of seed 001, which leaves out any hour that
// holds gateway cache hits (they would read as the carrier's cache working).
// It is bounded in bytes, the oldest answers going first; with Fleet set the
// replicas share one cache in Redis, bounded the same way.
type ResponseCache struct {
	TTL time.Duration
	// MaxBytes bounds the answers kept (default 64 MiB); past it the
	// oldest go. An answer larger than a sixteenth of it is not kept.
	MaxBytes int64
	// Fleet, when set, keeps the cache in Redis for every replica.
	Fleet *fleet.State

	mu      sync.Mutex
	entries map[[32]byte]cached
	order   [][32]byte // oldest first
	bytes   int64
}

// DefaultCacheBytes bounds a response cache without MaxBytes.
const DefaultCacheBytes = 64 << 20

type cached struct {
	answer []byte
	route  Route
	at     time.Time
}

// cacheKey is the project and the exact body.
func cacheKey(project string, body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(project))
	h.Write([]byte{0})
	h.Write(body)
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (c *ResponseCache) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultCacheBytes
}

// get returns a fresh answer to the same request, and the listing that gave it.
func (c *ResponseCache) get(project string, body []byte, now time.Time) ([]byte, Route, bool) {
	if c == nil {
		return nil, Route{}, false
	}
	k := cacheKey(project, body)
	if c.Fleet != nil {
		if e, ok, err := c.Fleet.CachedAnswer(hex.EncodeToString(k[:])); err == nil {
			if !ok {
				return nil, Route{}, false
			}
			return e.Answer, Route{ID: e.ListingSlug, ListingID: e.ListingID}, true
		}
		// Redis away: this replica's own, below.
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || now.Sub(e.at) > c.TTL {
		return nil, Route{}, false
	}
	return e.answer, e.route, true
}

// put keeps an answer.
func (c *ResponseCache) put(project string, body, answer []byte, route Route, now time.Time) {
	if c == nil || int64(len(answer)) > c.maxBytes()/16 {
		return
	}
	k := cacheKey(project, body)
	if c.Fleet != nil {
		err := c.Fleet.CacheAnswer(hex.EncodeToString(k[:]), fleet.CachedAnswer{Answer: answer, ListingSlug: route.ID, ListingID: route.ListingID},
			c.TTL, c.maxBytes())
		if err == nil {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[32]byte]cached{}
	}
	if old, ok := c.entries[k]; ok {
		c.bytes -= int64(len(old.answer))
	} else {
		c.order = append(c.order, k)
	}
	c.entries[k] = cached{answer: answer, route: route, at: now}
	c.bytes += int64(len(answer))
	for c.bytes > c.maxBytes() && len(c.order) > 0 {
		oldest := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.entries[oldest]; ok {
			c.bytes -= int64(len(e.answer))
			delete(c.entries, oldest)
		}
	}
}

// Bytes is the size of the answers this replica keeps itself.
func (c *ResponseCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
