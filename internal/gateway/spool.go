package gateway

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// Spool keeps on disk every count the recorder takes until the portal has
// stored its minute, so a gateway process killed without warning (kill -9,
// an out-of-memory kill, a crash) loses nothing it measured: another
// process of the same spool folder (the restarted one, or a replica on the
// same machine) replays the counts and posts them under the dead process's
// own source, where the portal's replay rule keeps them exactly once.
//
// Each process writes a folder of its own (named from its source, holding
// a lock while it lives), one file per UTC minute, one JSON line per count
// appended with a single write: a count the recorder holds is in the
// kernel's page cache, which a killed process cannot take with it. A
// machine's crash can still lose the last seconds; fsync on every count
// would cost more than the reference gateway's whole routing.
type Spool struct {
	root, dir, source string
	lock              *os.File

	mu       sync.Mutex
	segments map[int64]*os.File // open minute files by Unix minute
	failed   atomic.Int64
}

// spoolEntry is one count as the recorder took it: Op names the method,
// the other fields are its arguments.
type spoolEntry struct {
	Op       string            `json:"op"`
	At       time.Time         `json:"at"`
	Project  string            `json:"project,omitempty"`
	Model    string            `json:"model,omitempty"`
	Route    *spoolRoute       `json:"route,omitempty"`
	Kind     Kind              `json:"kind,omitempty"`
	Outcome  *Outcome          `json:"outcome,omitempty"`
	Event    *traffic.Event    `json:"event,omitempty"`
	Workload election.Workload `json:"workload,omitempty"`
	Request  *RequestKind      `json:"request,omitempty"`
	Prompt   int64             `json:"prompt,omitempty"`
	Asked    []string          `json:"asked,omitempty"`
	Shape    *traffic.Shape    `json:"shape,omitempty"`
	Label    string            `json:"label,omitempty"`
}

// spoolRoute is what a count needs of a route.
type spoolRoute struct {
	ID        string `json:"id"`
	ListingID int64  `json:"listing"`
}

func routeOf(r Route) *spoolRoute { return &spoolRoute{ID: r.ID, ListingID: r.ListingID} }

func (s *spoolRoute) route() Route { return Route{ID: s.ID, ListingID: s.ListingID} }

const (
	spoolLockFile   = "lock"
	spoolSourceFile = "source"
	spoolSuffix     = ".jsonl"
)

// OpenSpool opens this process's folder in root for the counts it reports
// under source.
func OpenSpool(root, source string) (*Spool, error) {
	dir := filepath.Join(root, spoolFolder(source))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lock, err := lockFolder(dir)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, spoolSourceFile), []byte(source), 0o600); err != nil {
		lock.Close()
		return nil, fmt.Errorf("spool: %w", err)
	}
	return &Spool{root: root, dir: dir, source: source, lock: lock, segments: map[int64]*os.File{}}, nil
}

// spoolFolder names a source's folder: a source may hold any character.
func spoolFolder(source string) string {
	sum := sha256.Sum256([]byte(source))
	return hex.EncodeToString(sum[:10])
}

// lockFolder takes the folder's lock, held while the process lives (the
// kernel lets go of it however the process ends).
func lockFolder(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, spoolLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Dir is this process's folder.
func (s *Spool) Dir() string { return s.dir }

// Failed is how many counts could not be written (a full disk): those
// are lost if this process is killed before it posts them.
func (s *Spool) Failed() int64 {
	if s == nil {
		return 0
	}
	return s.failed.Load()
}

// write appends one count to its minute's file.
func (s *Spool) write(e spoolEntry) {
	line, err := json.Marshal(e)
	if err != nil {
		s.failed.Add(1)
		return
	}
	line = append(line, '\n')
	minute := e.At.UTC().Unix() / 60
	if e.At.UTC().Unix() < 0 {
		minute = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.segments[minute]
	if f == nil {
		f, err = os.OpenFile(filepath.Join(s.dir, strconv.FormatInt(minute, 10)+spoolSuffix), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			s.failed.Add(1)
			return
		}
		s.segments[minute] = f
	}
	if _, err := f.Write(line); err != nil {
		s.failed.Add(1)
	}
}

// Posted forgets the minutes that ended by until: the portal has them.
func (s *Spool) Posted(until time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for minute, f := range s.segments {
		if time.Unix((minute+1)*60, 0).After(until) {
			continue
		}
		f.Close()
		_ = os.Remove(f.Name())
		delete(s.segments, minute)
	}
}

// Close lets go of the folder: removed when every minute was posted, else
// left, with its counts, for another process to post.
func (s *Spool) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for minute, f := range s.segments {
		f.Close()
		delete(s.segments, minute)
	}
	left, err := segmentsIn(s.dir)
	if err == nil && len(left) == 0 {
		_ = os.RemoveAll(s.dir)
	}
	return s.lock.Close()
}

// segmentsIn is a folder's minute files, oldest first.
func segmentsIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), spoolSuffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out) // Unix minutes have the same number of digits for centuries
	return out, nil
}

// Orphan is the folder of a process that ended without posting all it
// counted, locked by the process that adopted it.
type Orphan struct {
	Source   string
	Recorder *Recorder
	// Counts is how many counts were read back; Torn is 1 when the last
	// line of a minute was cut short by the kill (that count is lost).
	Counts, Torn int
	dir          string
	lock         *os.File
}

// Done removes the orphan's folder: its counts are posted.
func (o *Orphan) Done() error {
	defer o.lock.Close()
	return os.RemoveAll(o.dir)
}

// Release leaves the orphan for a later try (the portal is away).
func (o *Orphan) Release() { o.lock.Close() }

// Orphans adopts every other folder of the spool whose process has ended:
// each one's counts replayed into a recorder of its own.
func (s *Spool) Orphans() ([]*Orphan, error) {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []*Orphan
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(s.root, e.Name())
		if !e.IsDir() || dir == s.dir {
			continue
		}
		lock, err := lockFolder(dir)
		if err != nil {
			continue // alive, or not a spool folder
		}
		o, err := replayFolder(dir)
		if err != nil {
			lock.Close()
			errs = append(errs, err)
			continue
		}
		o.lock = lock
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// replayFolder reads a folder's counts back into a recorder.
func replayFolder(dir string) (*Orphan, error) {
	source, err := os.ReadFile(filepath.Join(dir, spoolSourceFile))
	if err != nil {
		return nil, fmt.Errorf("spool %s: no source: %w", dir, err)
	}
	o := &Orphan{Source: string(source), Recorder: NewRecorder(), dir: dir}
	files, err := segmentsIn(dir)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	for _, name := range files {
		if err := o.replay(name); err != nil {
			return nil, fmt.Errorf("spool %s: %w", name, err)
		}
	}
	return o, nil
}

func (o *Orphan) replay(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		var e spoolEntry
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
			// Only a write cut short by the kill: every line before it
			// was whole when the next began.
			o.Torn++
			continue
		}
		o.Counts++
		o.Recorder.apply(e)
	}
	return lines.Err()
}

// apply takes one count read back, as the recorder took it first.
func (r *Recorder) apply(e spoolEntry) {
	var route Route
	if e.Route != nil {
		route = e.Route.route()
	}
	switch e.Op {
	case opAttempt:
		if e.Outcome != nil {
			r.Attempt(e.Project, e.Model, route, e.Kind, *e.Outcome, e.At)
		}
	case opCacheHit:
		r.CacheHit(e.Project, e.Model, route, e.At)
	case opCapped:
		r.Capped(route, e.At)
	case opHeldBack:
		r.HeldBack(route, e.At)
	case opDemanded:
		if e.Request != nil {
			r.Demanded(e.Model, e.Workload, *e.Request, e.Prompt, e.Asked, e.At)
		}
	case opLimited:
		if e.Event != nil {
			r.Limited(route, *e.Event)
		}
	case opHeld:
		if e.Shape != nil {
			r.Held(*e.Shape, route, e.At)
		}
	case opUsedBy:
		if e.Outcome != nil {
			r.UsedBy(e.Label, route, *e.Outcome, e.At)
		}
	}
}

// The recorder's counts, as the spool names them.
const (
	opAttempt  = "attempt"
	opCacheHit = "hit"
	opCapped   = "capped"
	opHeldBack = "held-back"
	opDemanded = "demand"
	opLimited  = "limited"
	opHeld     = "held"
	opUsedBy   = "used"
)

// AdoptOrphans posts the counts of this spool's ended processes, each
// under its own source, and removes their folders once the portal has
// them. A portal away leaves them for the next call.
func (r *Reporter) AdoptOrphans(ctx context.Context) error {
	spool := r.Recorder.Spool
	if spool == nil {
		return nil
	}
	orphans, err := spool.Orphans()
	for _, o := range orphans {
		posting := &Reporter{API: r.API, Recorder: o.Recorder, Log: r.Log, Now: r.Now, Source: o.Source, ProjectLabel: r.ProjectLabel,
			DeclaredRates: r.DeclaredRates}
		// Every minute it holds, the open one included: its process is gone.
		if perr := posting.Report(ctx, r.Now().Add(2*time.Minute)); perr != nil {
			o.Release()
			err = errors.Join(err, fmt.Errorf("post the counts of %s: %w", o.Source, perr))
			continue
		}
		r.adopted.Add(int64(o.Counts))
		r.Log.Warn("metrics: posted the counts a gateway process left unposted when it ended (killed or crashed)",
			"source", o.Source, "counts", o.Counts, "torn", o.Torn)
		if derr := o.Done(); derr != nil {
			err = errors.Join(err, derr)
		}
	}
	return err
}
