package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/gatewayclient"
)

// Follower keeps the gateway's routing table current: it reads the whole
// catalogue (revalidated with If-None-Match, so unchanged figures cost a
// 304), then long-polls the change feed; a new revision, or the poll's wait
// running out (health figures move between revisions), reads the catalogue
// again. While the portal is away it keeps routing from its last good table
// and tries again with backoff.
type Follower struct {
	API *gatewayclient.ClientWithResponses
	Log *slog.Logger
	// Wait is how long a change-feed poll is held (default 10 s): also how
	// stale health figures may get.
	Wait time.Duration

	cur   atomic.Pointer[Table]
	ready chan struct{}
	once  sync.Once
	// Reads counts catalogue reads by answer (for the gateway's status and
	// tests): full bodies and 304s.
	Full, NotModified atomic.Int64
}

// Current is the table to route by, nil before the first catalogue read.
func (f *Follower) Current() *Table { return f.cur.Load() }

// Ready is closed once a first table is in.
func (f *Follower) Ready() <-chan struct{} {
	f.once.Do(func() { f.ready = make(chan struct{}) })
	return f.ready
}

// Run follows the catalogue until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		err := f.refresh(ctx)
		if err == nil {
			err = f.poll(ctx)
		}
		if err == nil {
			backoff = time.Second
			continue
		}
		if ctx.Err() != nil {
			return
		}
		f.Log.Warn("catalogue: keeping the last good table", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// refresh reads the whole catalogue unless it is unchanged.
func (f *Follower) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var etag string
	if t := f.cur.Load(); t != nil {
		etag = t.ETag
	}
	res, err := f.API.GetCatalogueWithResponse(ctx, &gatewayclient.GetCatalogueParams{IfNoneMatch: nilIfEmpty(etag)})
	if err != nil {
		return fmt.Errorf("read the catalogue: %w", err)
	}
	switch res.StatusCode() {
	case http.StatusNotModified:
		f.NotModified.Add(1)
		return nil
	case http.StatusOK:
	default:
		return fmt.Errorf("read the catalogue: status %d: %.200s", res.StatusCode(), res.Body)
	}
	if res.JSON200 == nil {
		return errors.New("read the catalogue: no body")
	}
	t, err := BuildTable(res.JSON200, res.HTTPResponse.Header.Get("ETag"))
	if err != nil {
		return err
	}
	f.Full.Add(1)
	if f.cur.Swap(t) == nil {
		f.Ready()
		close(f.ready)
	}
	return nil
}

// poll waits on the change feed for a revision past the table's.
func (f *Follower) poll(ctx context.Context) error {
	t := f.cur.Load()
	if t == nil {
		return nil
	}
	wait := f.Wait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	secs := fmt.Sprintf("%dms", wait.Milliseconds())
	res, err := f.API.GetCatalogueChangesWithResponse(ctx, &gatewayclient.GetCatalogueChangesParams{Since: t.Revision, Wait: &secs})
	if err != nil {
		return fmt.Errorf("poll the change feed: %w", err)
	}
	if res.StatusCode() != http.StatusOK {
		return fmt.Errorf("poll the change feed: status %d: %.200s", res.StatusCode(), res.Body)
	}
	return nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Credentials fetches and caches each listing's endpoint key
// (credentials:read); a listing's key is read again when its catalogue
// revision moves or the carrier refused it.
type Credentials struct {
	API *gatewayclient.ClientWithResponses

	mu   sync.Mutex
	keys map[int64]credential
}

type credential struct {
	revision              int64
	baseURL, key, upModel string
}

// For returns the base URL, key and upstream model name of a listing.
func (c *Credentials) For(ctx context.Context, r Route) (baseURL, key, upstreamModel string, err error) {
	c.mu.Lock()
	cred, ok := c.keys[r.ListingID]
	c.mu.Unlock()
	if ok && cred.revision == r.Revision {
		return cred.baseURL, cred.key, cred.upModel, nil
	}
	res, err := c.API.GetCredentialsWithResponse(ctx, r.ListingID)
	if err != nil {
		return "", "", "", fmt.Errorf("credentials of %s: %w", r.ID, err)
	}
	if res.JSON200 == nil {
		return "", "", "", fmt.Errorf("credentials of %s: status %d: %.200s", r.ID, res.StatusCode(), res.Body)
	}
	cred = credential{revision: r.Revision, baseURL: res.JSON200.BaseUrl, key: res.JSON200.ApiKey, upModel: res.JSON200.UpstreamModel}
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[int64]credential{}
	}
	c.keys[r.ListingID] = cred
	c.mu.Unlock()
	return cred.baseURL, cred.key, cred.upModel, nil
}

// Forget drops a listing's cached key (the carrier answered 401).
func (c *Credentials) Forget(listingID int64) {
	c.mu.Lock()
	delete(c.keys, listingID)
	c.mu.Unlock()
}
