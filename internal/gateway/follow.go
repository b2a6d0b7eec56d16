package gateway

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/gatewayclient"
)

// Follower keeps the gateway's routing table current: it reads the
// catalogue and its health, each revalidated with its own If-None-Match (so
// health moving costs the health document, never the fares, and nothing
// moving costs two 304s), then long-polls the change feed; a new revision,
// or the poll's wait running out (health moves between revisions), reads
// them again. While the portal is away it keeps routing from its last good
// table and tries again with backoff.
type Follower struct {
	API *gatewayclient.ClientWithResponses
	Log *slog.Logger
	// Wait is how long a change-feed poll is held (default 10 s): also how
	// stale health figures may get.
	Wait time.Duration

	cur   atomic.Pointer[Table]
	ready chan struct{}
	once  sync.Once
	// Full and NotModified count catalogue reads by answer (for the
	// gateway's status and tests): full bodies and 304s; HealthFull and
	// HealthNotModified the same for health.
	Full, NotModified             atomic.Int64
	HealthFull, HealthNotModified atomic.Int64
	// checked is when the portal last answered a catalogue read (Unix
	// nanoseconds): how stale the table may be.
	checked atomic.Int64
	// restoredFrom: the first table was a saved snapshot's.
	restoredFrom atomic.Bool

	// What the table was built from, with the validators to revalidate
	// them; only Run's goroutine touches them.
	cat                 *gatewayclient.Catalogue
	health              map[int64]gatewayclient.Health
	catETag, healthETag string
}

// CheckedAt is when the portal last answered a read of the catalogue and
// its health (zero before the first).
func (f *Follower) CheckedAt() time.Time {
	if n := f.checked.Load(); n > 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
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

// refresh reads the catalogue and its health where they changed, and
// builds a new table when either did.
func (f *Follower) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	catChanged, err := f.readCatalogue(ctx)
	if err != nil {
		return err
	}
	healthChanged, err := f.readHealth(ctx)
	if err != nil {
		return err
	}
	f.checked.Store(time.Now().UnixNano())
	if !catChanged && !healthChanged && f.cur.Load() != nil {
		return nil
	}
	return f.install()
}

// install builds a table from the catalogue and health held and routes by
// it from now on.
func (f *Follower) install() error {
	t, err := BuildTable(f.cat, f.health)
	if err != nil {
		return err
	}
	// The health map is updated in place by the next delta: the table
	// keeps its own copy.
	t.catalogue, t.health = f.cat, maps.Clone(f.health)
	if f.cur.Swap(t) == nil {
		f.Ready()
		close(f.ready)
	}
	return nil
}

// restore routes by a saved catalogue and health until the portal answers
// (called before Run: the first read is a full one, no validator kept).
func (f *Follower) restore(cat *gatewayclient.Catalogue, health map[int64]gatewayclient.Health) error {
	f.cat, f.health = cat, health
	f.restoredFrom.Store(true)
	return f.install()
}

// Restored reports whether the table is still a saved snapshot's: the
// portal has not answered a catalogue read since the process started.
func (f *Follower) Restored() bool { return f.restoredFrom.Load() && f.checked.Load() == 0 }

// readCatalogue reads the fares unless they are unchanged, reporting
// whether they were read.
func (f *Follower) readCatalogue(ctx context.Context) (bool, error) {
	res, err := f.API.GetCatalogueWithResponse(ctx, &gatewayclient.GetCatalogueParams{IfNoneMatch: nilIfEmpty(f.catETag)})
	if err != nil {
		return false, fmt.Errorf("read the catalogue: %w", err)
	}
	read, err := revalidated("read the catalogue", res.StatusCode(), res.Body, res.JSON200 != nil, &f.Full, &f.NotModified)
	if read {
		f.cat, f.catETag = res.JSON200, res.HTTPResponse.Header.Get("ETag")
	}
	return read, err
}

// readHealth reads the listings' health unless it is unchanged (only the
// listings that moved, when the portal still knows the figures held),
// reporting whether it was read.
func (f *Follower) readHealth(ctx context.Context) (bool, error) {
	delta := true
	res, err := f.API.GetCatalogueHealthWithResponse(ctx, &gatewayclient.GetCatalogueHealthParams{Delta: &delta, IfNoneMatch: nilIfEmpty(f.healthETag)})
	if err != nil {
		return false, fmt.Errorf("read the catalogue's health: %w", err)
	}
	read, err := revalidated("read the catalogue's health", res.StatusCode(), res.Body, res.JSON200 != nil, &f.HealthFull, &f.HealthNotModified)
	if !read {
		return false, err
	}
	if !res.JSON200.Delta || f.health == nil {
		f.health = make(map[int64]gatewayclient.Health, len(res.JSON200.Listings))
	}
	for _, l := range res.JSON200.Listings {
		f.health[l.ListingId] = l.Metrics
	}
	f.healthETag = res.HTTPResponse.Header.Get("ETag")
	return true, nil
}

// revalidated reads a revalidating GET's answer: a 304 (counted in
// notModified) reads nothing, a 200 with a body (counted in full) is read,
// anything else is an error naming what was being done.
func revalidated(doing string, status int, body []byte, decoded bool, full, notModified *atomic.Int64) (bool, error) {
	switch {
	case status == http.StatusNotModified:
		notModified.Add(1)
		return false, nil
	case status != http.StatusOK:
		return false, fmt.Errorf("%s: status %d: %.200s", doing, status, body)
	case !decoded:
		return false, errors.New(doing + ": no body")
	}
	full.Add(1)
	return true, nil
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

// Credentials fetches and holds each listing's endpoint key
// (credentials:read); a listing's key is read again when its catalogue
// revision moves or the carrier refused it. Keys are held sealed with a
// key of this process's own (AES-GCM), opened for the request that uses
// them: a heap dump or core file shows none of them in clear. The
// process's key lives in the same memory, so this guards against a dump
// shipped with a bug report, not against someone reading the process.
type Credentials struct {
	API *gatewayclient.ClientWithResponses
	// Snapshot, when set, is saved with every table Keep holds and
	// whenever it reads credentials.
	Snapshot *Snapshot
	// Log says when the snapshot cannot be saved (nil: not said).
	Log *slog.Logger

	mu   sync.Mutex
	keys map[int64]credential
	// missing names the routes of the last table held whose credentials
	// could not be read (Keep's goroutine writes it).
	missing []string

	sealOnce sync.Once
	aead     cipher.AEAD
}

type credential struct {
	revision         int64
	baseURL, upModel string
	sealedKey        []byte
}

// sealer is the process's own key for the keys held.
func (c *Credentials) sealer() cipher.AEAD {
	c.sealOnce.Do(func() {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic(fmt.Sprintf("credentials: no randomness: %v", err)) // crypto/rand never fails on Linux
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			panic(err) // a 32-byte key is always valid
		}
		c.aead, err = cipher.NewGCM(block)
		if err != nil {
			panic(err)
		}
	})
	return c.aead
}

func (c *Credentials) seal(key string) []byte {
	a := c.sealer()
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(key)+a.Overhead())
	_, _ = rand.Read(nonce)
	return a.Seal(nonce, nonce, []byte(key), nil)
}

func (c *Credentials) open(sealed []byte) string {
	a := c.sealer()
	n := a.NonceSize()
	plain, err := a.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		panic(fmt.Sprintf("credentials: a key sealed by this process does not open: %v", err))
	}
	return string(plain)
}

// For returns the base URL, key and upstream model name of a listing: the
// ones held for its revision, else read from the portal; with the portal
// away, the ones held for an earlier revision (a changed fare seldom
// changes the key, and a stale key fails at the carrier as a missing one
// would have failed here).
func (c *Credentials) For(ctx context.Context, r Route) (baseURL, key, upstreamModel string, err error) {
	c.mu.Lock()
	cred, ok := c.keys[r.ListingID]
	c.mu.Unlock()
	if ok && cred.revision == r.Revision {
		return cred.baseURL, c.open(cred.sealedKey), cred.upModel, nil
	}
	fresh, err := c.fetch(ctx, r)
	if err != nil {
		if ok {
			return cred.baseURL, c.open(cred.sealedKey), cred.upModel, nil
		}
		return "", "", "", err
	}
	return fresh.baseURL, c.open(fresh.sealedKey), fresh.upModel, nil
}

// fetch reads a listing's credentials from the portal and holds them.
func (c *Credentials) fetch(ctx context.Context, r Route) (credential, error) {
	res, err := c.API.GetCredentialsWithResponse(ctx, r.ListingID)
	if err != nil {
		return credential{}, fmt.Errorf("credentials of %s: %w", r.ID, err)
	}
	if res.JSON200 == nil {
		return credential{}, fmt.Errorf("credentials of %s: status %d: %.200s", r.ID, res.StatusCode(), res.Body)
	}
	cred := credential{revision: r.Revision, baseURL: res.JSON200.BaseUrl, sealedKey: c.seal(res.JSON200.ApiKey), upModel: res.JSON200.UpstreamModel}
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[int64]credential{}
	}
	c.keys[r.ListingID] = cred
	c.mu.Unlock()
	return cred, nil
}

// held is every credential held, for the snapshot.
func (c *Credentials) held() []savedCredential {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]savedCredential, 0, len(c.keys))
	for id, cred := range c.keys {
		out = append(out, savedCredential{ListingID: id, Revision: cred.revision, BaseURL: cred.baseURL,
			APIKey: c.open(cred.sealedKey), UpstreamModel: cred.upModel})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ListingID < out[j].ListingID })
	return out
}

// restore holds a snapshot's credentials (those read since are kept).
func (c *Credentials) restore(saved []savedCredential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[int64]credential{}
	}
	for _, s := range saved {
		if _, ok := c.keys[s.ListingID]; !ok {
			c.keys[s.ListingID] = credential{revision: s.Revision, baseURL: s.BaseURL, sealedKey: c.seal(s.APIKey), upModel: s.UpstreamModel}
		}
	}
}

// Keep holds the credentials of every listing the follower's table routes
// to, read as soon as a table names them (not on a listing's first
// request), and tries the missing ones again every retry (default 10 s):
// a portal that goes away later leaves the gateway able to route every
// listing of its last table. It logs which listings it cannot route yet.
func (c *Credentials) Keep(ctx context.Context, f *Follower, log *slog.Logger, retry time.Duration) {
	if retry <= 0 {
		retry = 10 * time.Second
	}
	var held *Table
	var said string
	tick := time.NewTicker(min(retry, time.Second))
	defer tick.Stop()
	lastTry := time.Time{}
	for {
		if t := f.Current(); t != nil && (t != held || len(c.Missing()) > 0 && time.Since(lastTry) >= retry) {
			newTable := t != held
			held, lastTry = t, time.Now()
			missing, fetched := c.hold(ctx, t)
			if c.Snapshot != nil && (newTable || fetched > 0) {
				if err := c.Snapshot.save(t, c.held(), time.Now()); err != nil && c.Log != nil {
					c.Log.Warn("snapshot: not saved; a restart while the portal is away would not route", "err", err)
				}
			}
			if now := strings.Join(missing, ", "); now != said {
				if now != "" {
					log.Warn("credentials: the portal did not give these listings' credentials; they are routed only once it does", "listings", now)
				} else if said != "" {
					log.Info("credentials: every listing's credentials are held")
				}
				said = now
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// hold reads the credentials a table needs and does not hold, four at a
// time, and returns the listings still without them and how many it read.
func (c *Credentials) hold(ctx context.Context, t *Table) (missing []string, fetched int) {
	var need []Route
	c.mu.Lock()
	for _, m := range t.Models {
		for _, r := range m.Listings {
			if cred, ok := c.keys[r.ListingID]; !ok || cred.revision != r.Revision {
				need = append(need, r)
			}
		}
	}
	c.mu.Unlock()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		slots = make(chan struct{}, 4)
	)
	for _, r := range need {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			fetchCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := c.fetch(fetchCtx, r)
			if err == nil {
				mu.Lock()
				fetched++
				mu.Unlock()
				return
			}
			c.mu.Lock()
			_, older := c.keys[r.ListingID]
			c.mu.Unlock()
			if !older {
				mu.Lock()
				missing = append(missing, r.ID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(missing)
	c.mu.Lock()
	c.missing = missing
	c.mu.Unlock()
	return missing, fetched
}

// Missing names the listings of the last table held that the gateway
// cannot route for want of credentials.
func (c *Credentials) Missing() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.missing
}

// Forget drops a listing's cached key (the carrier answered 401).
func (c *Credentials) Forget(listingID int64) {
	c.mu.Lock()
	delete(c.keys, listingID)
	c.mu.Unlock()
}

// missingOrNone is Missing, nil on a gateway without credentials.
func (c *Credentials) missingOrNone() []string {
	if c == nil {
		return nil
	}
	return c.Missing()
}
