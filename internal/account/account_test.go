package account

import (
	"context"
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	ctx := context.Background()
	check := func(hash, password string) bool {
		ok, err := VerifyPassword(ctx, hash, password)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	hash, err := HashPassword(ctx, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$") || strings.Contains(hash, "correct") {
		t.Fatalf("hash %q", hash)
	}
	if !check(hash, "correct horse battery") {
		t.Error("right password refused")
	}
	for _, wrong := range []string{"", "correct horse batter", "Correct horse battery"} {
		if check(hash, wrong) {
			t.Errorf("wrong password %q accepted", wrong)
		}
	}
	again, _ := HashPassword(ctx, "correct horse battery")
	if again == hash {
		t.Error("two hashes of one password are equal: no salt")
	}
	if check("not-a-hash", "x") {
		t.Error("garbage hash accepted")
	}
}

func TestNormalizeEmailAndSlug(t *testing.T) {
	for in, want := range map[string]string{" Ada@Example.COM ": "ada@example.com", "no-at-sign": "", "Ada <a@b.c>": "", "a@b": "a@b"} {
		if got := NormalizeEmail(in); got != want {
			t.Errorf("NormalizeEmail(%q) = %q, want %q", in, got, want)
		}
	}
	for slug, want := range map[string]bool{"nebula-ai": true, "ab": false, "-bad": false, "Upper": false, "ok1": true} {
		if ValidSlug(slug) != want {
			t.Errorf("ValidSlug(%q) != %v", slug, want)
		}
	}
}
