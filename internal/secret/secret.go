// Package secret seals small secrets (a carrier's API key) for storage:
// AES-256-GCM with a random nonce, under a key kept outside the database.
// A sealed value names the key that sealed it, so a key can be rotated
// while old values are still readable.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// Box seals with its primary key and opens with any key it holds.
type Box struct {
	primary string // id of the key that seals
	aeads   map[string]cipher.AEAD
	// derived is a key for MACs, derived from the primary key so that no
	// MAC can be turned into a sealing key.
	derived []byte
}

// ErrNoKey is returned when a sealed value names a key the box does not hold.
var ErrNoKey = errors.New("sealed with a key this instance does not hold")

// ParseKey decodes a key as written in AIRSIDE_SECRET_KEY: 32 bytes in
// standard base64 (or 64 hex digits).
func ParseKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	if b, err := base64.StdEncoding.DecodeString(text); err == nil && len(b) == KeySize {
		return b, nil
	}
	if b, err := hex.DecodeString(text); err == nil && len(b) == KeySize {
		return b, nil
	}
	return nil, fmt.Errorf("a secret key is %d random bytes in base64 (openssl rand -base64 32)", KeySize)
}

// NewKey returns a fresh random key, base64-encoded.
func NewKey() string {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the system has no randomness: nothing is safe
	}
	return base64.StdEncoding.EncodeToString(b)
}

// New returns a box sealing with primary and opening with primary and every
// older key (kept while a rotation re-seals what they sealed).
func New(primary []byte, older ...[]byte) (*Box, error) {
	b := &Box{aeads: map[string]cipher.AEAD{}}
	for i, k := range append([][]byte{primary}, older...) {
		block, err := aes.NewCipher(k)
		if err != nil || len(k) != KeySize {
			return nil, fmt.Errorf("secret key %d: need %d bytes", i+1, KeySize)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secret key %d: %w", i+1, err)
		}
		id := KeyID(k)
		if i == 0 {
			b.primary = id
			mac := hmac.New(sha256.New, k)
			mac.Write([]byte("airside: MAC key"))
			b.derived = mac.Sum(nil)
		}
		b.aeads[id] = aead
	}
	return b, nil
}

// MAC is an HMAC-SHA256 of message for one purpose, under a key derived from
// the primary key: a stable, unguessable name for something (a webhook
// message id) that tells nobody without the key anything about message.
func (b *Box) MAC(purpose, message string) []byte {
	mac := hmac.New(sha256.New, b.derived)
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write([]byte(message))
	return mac.Sum(nil)
}

// KeyID names a key without revealing it: the first 8 hex digits of its
// SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// Seal encrypts plain; the result is "v1.<key id>.<base64 nonce+ciphertext>".
// The additional data binds the value to what it belongs to (a listing's
// endpoint), so a sealed key copied to another row does not open there.
func (b *Box) Seal(plain, additional string) (string, error) {
	aead := b.aeads[b.primary]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(additional))
	return "v1." + b.primary + "." + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal produced with the same additional data.
func (b *Box) Open(sealed, additional string) (string, error) {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return "", errors.New("open: not a sealed value")
	}
	aead, ok := b.aeads[parts[1]]
	if !ok {
		return "", fmt.Errorf("open: key %s: %w", parts[1], ErrNoKey)
	}
	raw, err := base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) < aead.NonceSize() {
		return "", errors.New("open: malformed sealed value")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(additional))
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	return string(plain), nil
}

// SealedWith reports the id of the key that sealed a value.
func SealedWith(sealed string) string {
	parts := strings.SplitN(sealed, ".", 3)
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// Primary is the id of the key that seals.
func (b *Box) Primary() string { return b.primary }

// LoadOrCreate reads the key file at path, creating it (mode 0600) with a
// fresh key when it does not exist: the demo's zero-setup key.
func LoadOrCreate(path string) ([]byte, error) {
	if text, err := os.ReadFile(path); err == nil {
		return ParseKey(string(text))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create secret key: %w", err)
	}
	key := NewKey()
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("create secret key: %w", err)
	}
	return ParseKey(key)
}

// Hint is how a key is shown once stored: its prefix and last four
// characters ("sk-...wxyz"), never more.
func Hint(key string) string {
	key = strings.TrimSpace(key)
	if len(key) < 12 {
		return "…" // too short to show any of it safely
	}
	prefix := ""
	if i := strings.IndexByte(key, '-'); i > 0 && i <= 4 {
		prefix = key[:i+1]
	}
	return prefix + "..." + key[len(key)-4:]
}
