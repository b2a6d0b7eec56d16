package secret

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func mustKey(t *testing.T) []byte {
	t.Helper()
	k, err := ParseKey(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpenRoundTripAndBinding(t *testing.T) {
	box, err := New(mustKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal("sk-live-abcdefghijkl", "endpoint:7")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "abcdefghijkl") {
		t.Fatalf("sealed value shows the key: %s", sealed)
	}
	again, _ := box.Seal("sk-live-abcdefghijkl", "endpoint:7")
	if again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if got, err := box.Open(sealed, "endpoint:7"); err != nil || got != "sk-live-abcdefghijkl" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := box.Open(sealed, "endpoint:8"); err == nil {
		t.Fatal("a value sealed for endpoint 7 opened as endpoint 8's")
	}
	tampered := sealed[:len(sealed)-2] + "AA"
	if _, err := box.Open(tampered, "endpoint:7"); err == nil {
		t.Fatal("a tampered value opened")
	}
}

func TestRotationKeepsOldValuesReadable(t *testing.T) {
	oldKey, newKey := mustKey(t), mustKey(t)
	oldBox, _ := New(oldKey)
	sealed, _ := oldBox.Seal("sk-1234567890ab", "x")
	newOnly, _ := New(newKey)
	if _, err := newOnly.Open(sealed, "x"); !errors.Is(err, ErrNoKey) {
		t.Fatalf("open under the wrong key: %v, want ErrNoKey", err)
	}
	rotating, err := New(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rotating.Open(sealed, "x")
	if err != nil || plain != "sk-1234567890ab" {
		t.Fatalf("open with the old key kept: %q, %v", plain, err)
	}
	resealed, _ := rotating.Seal(plain, "x")
	if SealedWith(resealed) != KeyID(newKey) || SealedWith(sealed) != KeyID(oldKey) {
		t.Fatal("a re-seal must use the new primary key")
	}
}

func TestParseKeyAndFile(t *testing.T) {
	for _, bad := range []string{"", "short", strings.Repeat("a", 44)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	a, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreate(path)
	if err != nil || string(a) != string(b) {
		t.Fatalf("a second load must read the same key: %v", err)
	}
}

func TestHint(t *testing.T) {
	cases := map[string]string{
		"sk-proj-abcdefghijklmnop": "sk-...mnop",
		"abcdefghijklmnop":         "...mnop",
		"sk-short":                 "…",
	}
	for key, want := range cases {
		if got := Hint(key); got != want {
			t.Errorf("Hint(%q) = %q, want %q", key, got, want)
		}
	}
}
