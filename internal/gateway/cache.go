package gateway

import (
	"crypto/sha256"
	"sync"
	"time"
)

// ResponseCache answers a project's exact repeat of a non-streamed request
// from the gateway itself, for TTL. It is off unless configured: its point
// here is the learned-rate rule of seed 001, which leaves out any hour that
// holds gateway cache hits (they would read as the carrier's cache working).
type ResponseCache struct {
	TTL time.Duration
	// MaxEntries bounds the cache (default 10,000); past it the oldest go.
	MaxEntries int

	mu      sync.Mutex
	entries map[[32]byte]cached
	order   [][32]byte
}

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

// get returns a fresh answer to the same request, and the listing that gave it.
func (c *ResponseCache) get(project string, body []byte, now time.Time) ([]byte, Route, bool) {
	if c == nil {
		return nil, Route{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[cacheKey(project, body)]
	if !ok || now.Sub(e.at) > c.TTL {
		return nil, Route{}, false
	}
	return e.answer, e.route, true
}

// put keeps an answer.
func (c *ResponseCache) put(project string, body, answer []byte, route Route, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[32]byte]cached{}
	}
	max := c.MaxEntries
	if max <= 0 {
		max = 10000
	}
	for len(c.order) >= max {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	k := cacheKey(project, body)
	if _, ok := c.entries[k]; !ok {
		c.order = append(c.order, k)
	}
	c.entries[k] = cached{answer: answer, route: route, at: now}
}
