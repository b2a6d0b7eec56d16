package gateway

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airside/airside/internal/gatewayclient"
)

// Snapshot keeps on disk what the gateway routes by: the last catalogue and
// health it read, and the credentials of their listings. A gateway
// restarted while the portal is away restores it and routes every listing
// of that catalogue it holds credentials for (the portal answered nothing
// yet, so nothing newer is known; a long-running gateway routes the same
// table through the same outage).
//
// The file is sealed (AES-256-GCM) with a key derived from the gateway's
// API token: whoever can open it could already read the credentials from
// the portal with that token, and a token revoked or rotated leaves the
// file unreadable (it is then ignored, and the portal read as before).
// It is written whole and renamed into place, mode 0600.
type Snapshot struct {
	path string
	aead cipher.AEAD
}

// snapshotDoc is the sealed file's content.
type snapshotDoc struct {
	SavedAt     time.Time                      `json:"savedAt"`
	Catalogue   *gatewayclient.Catalogue       `json:"catalogue"`
	Health      map[int64]gatewayclient.Health `json:"health"`
	Credentials []savedCredential              `json:"credentials"`
}

type savedCredential struct {
	ListingID     int64  `json:"listingId"`
	Revision      int64  `json:"revision"`
	BaseURL       string `json:"baseUrl"`
	APIKey        string `json:"apiKey"`
	UpstreamModel string `json:"upstreamModel"`
}

// snapshotFile is the snapshot's name in a portal's spool folder.
const snapshotFile = "routing.sealed"

// OpenSnapshot names the snapshot in dir (a portal's spool folder), sealed
// under token.
func OpenSnapshot(dir, token string) (*Snapshot, error) {
	key, err := hkdf.Key(sha256.New, []byte(token), []byte("airside gateway routing snapshot"), "v1", 32)
	if err != nil {
		return nil, fmt.Errorf("snapshot key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("snapshot key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("snapshot key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return &Snapshot{path: filepath.Join(dir, snapshotFile), aead: aead}, nil
}

// Path is the snapshot's file.
func (s *Snapshot) Path() string { return s.path }

// save writes a table's catalogue and health and the credentials held.
func (s *Snapshot) save(t *Table, creds []savedCredential, now time.Time) error {
	if t == nil || t.catalogue == nil {
		return nil // a table built elsewhere than from the portal: nothing to keep
	}
	plain, err := json.Marshal(snapshotDoc{SavedAt: now.UTC(), Catalogue: t.catalogue, Health: t.health, Credentials: creds})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(snapshotFile))
	tmp, err := os.CreateTemp(filepath.Dir(s.path), snapshotFile+".*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone by the rename once it succeeds
	if _, err := tmp.Write(sealed); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ErrNoSnapshot is returned by Restore when no snapshot was saved.
var ErrNoSnapshot = errors.New("no routing snapshot saved")

// Restore gives the follower the saved catalogue and health as its table
// (before its first read of the portal: call it before Run) and the
// credentials the saved credentials, and returns when it was saved. A
// snapshot sealed under another token, or damaged, is an error: the
// gateway then starts as if none was saved.
func (s *Snapshot) Restore(f *Follower, c *Credentials) (time.Time, error) {
	sealed, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, ErrNoSnapshot
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("snapshot: %w", err)
	}
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return time.Time{}, fmt.Errorf("snapshot %s: too short", s.path)
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(snapshotFile))
	if err != nil {
		return time.Time{}, fmt.Errorf("snapshot %s: cannot be opened with this token (another token's, or damaged)", s.path)
	}
	var doc snapshotDoc
	if err := json.Unmarshal(plain, &doc); err != nil {
		return time.Time{}, fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	if doc.Catalogue == nil {
		return time.Time{}, fmt.Errorf("snapshot %s: no catalogue", s.path)
	}
	if err := f.restore(doc.Catalogue, doc.Health); err != nil {
		return time.Time{}, fmt.Errorf("snapshot %s: %w", s.path, err)
	}
	c.restore(doc.Credentials)
	return doc.SavedAt, nil
}
