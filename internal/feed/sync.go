package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
)

// Config is a carrier's registered feed and what its last read did.
type Config struct {
	CarrierID int64
	URL       string
	// Submit sends each change to review at once; otherwise each is kept
	// as a draft for the carrier to submit.
	Submit bool
	// ETag and LastModified revalidate the next read.
	ETag, LastModified string
	CheckedAt          *time.Time
	// Failing is set while the feed cannot be read or parsed; Outcome is
	// the last read's report, a line per model.
	Failing bool
	Outcome string
	// Mapping is the carrier's choice of listing for feed models (by the
	// feed's model id): a listing id, or NotImported. A model not in it
	// files to the carrier's listing of the same slug.
	Mapping map[string]int64
	// Models are the ids of the models the last good read found.
	Models    []string
	UpdatedBy int64
	UpdatedAt time.Time
}

// Store keeps the feeds.
type Store interface {
	FindFeed(ctx context.Context, carrierID int64) (*Config, error)
	FindFeedsDue(ctx context.Context, checkedBefore time.Time) ([]Config, error)
	SaveFeed(ctx context.Context, actorID int64, c Config) error
	// RecordFeedRead stores a read's validators and report. tell is set
	// when the feed turned (started failing, or read again after failing):
	// the carrier's members read it in their inbox and its webhook gets
	// feed.failing or feed.recovered (by c.Failing), in the same
	// transaction.
	RecordFeedRead(ctx context.Context, c Config, tell string) error
	DeleteFeed(ctx context.Context, actorID, carrierID int64) error
	// ClaimFeedRead moves a feed's last check from was (nil: never) to
	// now, and reports whether this call did: of processes reading the
	// same due feed, one wins.
	ClaimFeedRead(ctx context.Context, carrierID int64, was *time.Time, now time.Time) (bool, error)
	// SaveFeedMapping replaces the carrier's mapping, audited, and drops
	// the feed's validators (the next read is a full one).
	SaveFeedMapping(ctx context.Context, actorID, carrierID int64, mapping map[string]int64) error
}

// Filer files fares the way the carrier API does (workflow.Service).
type Filer interface {
	FileByAPI(ctx context.Context, p *account.Principal, listingID int64, form fare.Form, submit bool, via string, idem *workflow.Idempotency) (int64, bool, error)
}

// Reads are what a read of the feed needs besides the store.
type Reads interface {
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	FindPrincipal(ctx context.Context, userID int64) (*account.Principal, error)
}

// Syncer reads carriers' feeds and files what changed.
type Syncer struct {
	Store Store
	Reads Reads
	Filer Filer
	// HTTP fetches feeds through the portal's outbound guard; Check is
	// the guard's address rule, applied when a feed is set and read.
	HTTP  *http.Client
	Check func(raw string) error
	Now   func() time.Time
	// Every is how often a feed is read (default 15 minutes).
	Every time.Duration
}

// Via is how a feed's filings name where they came from.
const Via = "provider feed"

// NotImported in a mapping keeps a feed model out of the carrier's
// filings.
const NotImported int64 = 0

// Register saves a carrier's feed (its admins only); the URL must be
// https (or http to a private address where the portal allows those) and
// pass the outbound guard.
func (s *Syncer) Register(ctx context.Context, p *account.Principal, carrierID int64, rawURL string, submit bool) error {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins set its feed.")
	}
	rawURL = strings.TrimSpace(rawURL)
	if rawURL == "" || len(rawURL) > 2000 {
		return apperr.Invalid(map[string]string{"url": "Give the feed's address, like https://api.example.com/openrouter/models."})
	}
	if s.Check != nil {
		if err := s.Check(rawURL); err != nil {
			return apperr.Invalid(map[string]string{"url": "The portal cannot fetch this address: " + err.Error() + "."})
		}
	}
	c := Config{CarrierID: carrierID, URL: rawURL, Submit: submit}
	if old, err := s.Store.FindFeed(ctx, carrierID); err == nil && old.URL == rawURL {
		c.ETag, c.LastModified, c.CheckedAt, c.Failing, c.Outcome = old.ETag, old.LastModified, old.CheckedAt, old.Failing, old.Outcome
		c.Models = old.Models
	}
	if old, err := s.Store.FindFeed(ctx, carrierID); err == nil {
		c.Mapping = old.Mapping // the carrier's choices outlive a new address
	}
	return s.Store.SaveFeed(ctx, p.User.ID, c)
}

// Map sets which listing each feed model files to (its admins only):
// choice maps a feed model id to one of the carrier's listings, or to
// NotImported; a model left out files to the listing of its slug. Two
// models may not file to one listing. The next read fetches the feed in
// full, so the new mapping files what it changes.
func (s *Syncer) Map(ctx context.Context, p *account.Principal, carrierID int64, choice map[string]int64) error {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins set its feed.")
	}
	if _, err := s.Store.FindFeed(ctx, carrierID); err != nil {
		return err
	}
	listings, err := s.Reads.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{carrierID}})
	if err != nil {
		return err
	}
	mine := map[int64]bool{}
	for _, l := range listings {
		mine[l.ID] = true
	}
	ids := make([]string, 0, len(choice))
	for id := range choice {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	problems, taken := map[string]string{}, map[int64]string{}
	for _, id := range ids {
		l := choice[id]
		switch {
		case l == NotImported:
		case !mine[l]:
			problems[MappingField(id)] = "Choose one of your listings, or \"not imported\"."
		case taken[l] != "":
			problems[MappingField(id)] = fmt.Sprintf("%s files to this listing already: one feed model per listing.", taken[l])
		default:
			taken[l] = id
		}
	}
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	return s.Store.SaveFeedMapping(ctx, p.User.ID, carrierID, choice)
}

// MappingField is the form field of a feed model's listing choice.
func MappingField(modelID string) string { return "map[" + modelID + "]" }

// Remove forgets a carrier's feed (its admins only).
func (s *Syncer) Remove(ctx context.Context, p *account.Principal, carrierID int64) error {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins set its feed.")
	}
	return s.Store.DeleteFeed(ctx, p.User.ID, carrierID)
}

// SyncNow reads a carrier's feed at once (its admins only).
func (s *Syncer) SyncNow(ctx context.Context, p *account.Principal, carrierID int64) (*Config, error) {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins read its feed on demand.")
	}
	c, err := s.Store.FindFeed(ctx, carrierID)
	if err != nil {
		return nil, err
	}
	return s.sync(ctx, *c, true)
}

// SyncDue reads every feed not read for Every; it returns how many it read.
func (s *Syncer) SyncDue(ctx context.Context) (int, error) {
	every := s.Every
	if every <= 0 {
		every = 15 * time.Minute
	}
	due, err := s.Store.FindFeedsDue(ctx, s.Now().Add(-every))
	if err != nil {
		return 0, err
	}
	read := 0
	for _, c := range due {
		// Every serve process runs this: the one that moves the feed's
		// last check reads it, so a feed is fetched, filed and (when it
		// turns) announced once.
		claimed, err := s.Store.ClaimFeedRead(ctx, c.CarrierID, c.CheckedAt, s.Now().UTC())
		if err != nil {
			return read, err
		}
		if !claimed {
			continue
		}
		if _, err := s.sync(ctx, c, false); err != nil {
			return read, err
		}
		read++
	}
	return read, nil
}

// sync reads a feed (revalidating it unless forced) and files each change;
// what it did is recorded on the feed.
func (s *Syncer) sync(ctx context.Context, c Config, force bool) (*Config, error) {
	wasFailing := c.Failing
	now := s.Now().UTC()
	c.CheckedAt = &now
	doc, etag, modified, unchanged, err := s.fetch(ctx, c, force)
	switch {
	case err != nil:
		c.Failing, c.Outcome = true, "The feed could not be read: "+err.Error()+". Nothing was filed."
	case unchanged:
		c.Failing = false
		if c.Outcome == "" {
			c.Outcome = "Unchanged since the last read."
		}
	default:
		c.Failing, c.ETag, c.LastModified = false, etag, modified
		c.Models = c.Models[:0:0]
		for i := range doc.Data {
			c.Models = append(c.Models, doc.Data[i].ID)
		}
		lines, err := s.file(ctx, c, doc)
		if err != nil {
			return nil, err
		}
		c.Outcome = strings.Join(lines, "\n")
	}
	tell := ""
	switch {
	case c.Failing && !wasFailing:
		tell = NoticeFailing(c.Outcome)
	case !c.Failing && wasFailing:
		tell = NoticeRecovered(c.URL)
	}
	if err := s.Store.RecordFeedRead(ctx, c, tell); err != nil {
		return nil, err
	}
	return &c, nil
}

func (s *Syncer) fetch(ctx context.Context, c Config, force bool) (doc *Document, etag, modified string, unchanged bool, err error) {
	if s.Check != nil {
		if err := s.Check(c.URL); err != nil {
			return nil, "", "", false, fmt.Errorf("the address is refused (%w)", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return nil, "", "", false, fmt.Errorf("the address is not a URL")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Airside feed reader")
	if !force {
		if c.ETag != "" {
			req.Header.Set("If-None-Match", c.ETag)
		}
		if c.LastModified != "" {
			req.Header.Set("If-Modified-Since", c.LastModified)
		}
	}
	res, err := s.HTTP.Do(req)
	if err != nil {
		return nil, "", "", false, fmt.Errorf("no answer (%v)", err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotModified:
		return nil, "", "", true, nil
	case res.StatusCode != http.StatusOK:
		return nil, "", "", false, fmt.Errorf("it answered %s", res.Status)
	}
	doc, err = Parse(res.Body)
	if err != nil {
		return nil, "", "", false, err
	}
	return doc, res.Header.Get("ETag"), res.Header.Get("Last-Modified"), false, nil
}

// file files each model of the feed whose fare differs from its listing's
// published one, and reports a line per model.
func (s *Syncer) file(ctx context.Context, c Config, doc *Document) ([]string, error) {
	issuer, err := s.Reads.FindPrincipal(ctx, c.UpdatedBy)
	if err != nil && apperr.Code(err) != apperr.ENOTFOUND {
		return nil, err
	}
	if issuer == nil || issuer.RoleIn(c.CarrierID) != account.CarrierAdmin {
		return []string{"The admin who set this feed is no longer the carrier's admin: an admin must save it again. Nothing was filed."}, nil
	}
	acting := account.WithinCarrier(issuer, c.CarrierID)
	listings, err := s.Reads.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{c.CarrierID}})
	if err != nil {
		return nil, err
	}
	bySlug, byID := map[string]*catalogue.Listing{}, map[int64]*catalogue.Listing{}
	for i := range listings {
		bySlug[listings[i].Model.Slug] = &listings[i]
		byID[listings[i].ID] = &listings[i]
	}
	var lines []string
	for i := range doc.Data {
		m := &doc.Data[i]
		chosen, mapped := c.Mapping[m.ID]
		var l *catalogue.Listing
		switch {
		case mapped && chosen == NotImported:
			lines = append(lines, fmt.Sprintf("%s: not imported, as you chose.", m.ID))
			continue
		case mapped:
			if l = byID[chosen]; l == nil {
				lines = append(lines, fmt.Sprintf("%s: the listing you chose for it is gone; choose another. Nothing was filed for it.", m.ID))
				continue
			}
		default:
			if l = bySlug[m.Slug()]; l == nil {
				lines = append(lines, fmt.Sprintf("%s: you have no listing of %s; add one, or choose which listing it files to.", m.ID, m.Slug()))
				continue
			}
		}
		lines = append(lines, s.fileModel(ctx, c, acting, m, l))
	}
	sort.Strings(lines)
	return lines, nil
}

func (s *Syncer) fileModel(ctx context.Context, c Config, acting *account.Principal, m *Model, l *catalogue.Listing) string {
	fields, err := m.Fields()
	if err != nil {
		return err.Error() + ". Nothing was filed for it."
	}
	var form fare.Form
	if l.Published != nil {
		form = fare.FormOf(l.Published)
	} else {
		form.LandingFee, form.Discount, form.CapScope = fare.BaselineLandingFee.Percent(), "0", string(fare.ScopeGlobal)
	}
	if errs := fare.Apply(&form, fields); errs != nil {
		return fmt.Sprintf("%s: %v. Nothing was filed for it.", m.ID, errs)
	}
	form.Justification, form.EffectiveAt = "From the provider feed "+c.URL+".", ""
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		var parts []string
		for _, p := range fare.Problems(errs) {
			parts = append(parts, p.Label+": "+p.Message)
		}
		return fmt.Sprintf("%s: %s Nothing was filed for it.", m.ID, strings.Join(parts, " "))
	}
	if l.Published != nil && len(fare.Diff(l.Published, parsed.Fare)) == 0 {
		return fmt.Sprintf("%s: as published.", m.ID)
	}
	if why := UnitMistake(m, l.Published, parsed.Fare); why != "" {
		return why
	}
	// The same feed content for the same listing is one filing, however
	// often it is read: its key is the content's hash.
	values, _ := json.Marshal(fare.ValuesOf(&form))
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("%d:", l.ID)), values...))
	key := "feed:" + hex.EncodeToString(sum[:16])
	id, replayed, err := s.Filer.FileByAPI(ctx, acting, l.ID, form, c.Submit, Via, &workflow.Idempotency{CarrierID: c.CarrierID, Key: key, BodyHash: key})
	switch {
	case apperr.Code(err) == apperr.ECONFLICT:
		return fmt.Sprintf("%s: %s", m.ID, apperr.Message(err))
	case err != nil:
		return fmt.Sprintf("%s: not filed: %s", m.ID, apperr.Message(err))
	case replayed:
		return fmt.Sprintf("%s: filed already as #%d.", m.ID, id)
	case c.Submit:
		return fmt.Sprintf("%s: filing #%d submitted for review.", m.ID, id)
	}
	return fmt.Sprintf("%s: draft #%d saved; submit it when ready.", m.ID, id)
}

// Feed is a carrier's feed for its admins' page (nil when none is set).
func (s *Syncer) Feed(ctx context.Context, p *account.Principal, carrierID int64) (*Config, error) {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins see and set its feed.")
	}
	c, err := s.Store.FindFeed(ctx, carrierID)
	if apperr.Code(err) == apperr.ENOTFOUND {
		return nil, nil
	}
	return c, err
}

// Run reads the feeds that are due every minute until ctx ends.
func (s *Syncer) Run(ctx context.Context, log func(error)) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if _, err := s.SyncDue(ctx); err != nil && ctx.Err() == nil {
			log(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
