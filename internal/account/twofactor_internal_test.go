package account

import (
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/airside/airside/internal/secret"
)

// TestTOTPWindow: the code of the current step and of one step either side
// (a phone clock up to 30 s off) is accepted, with the step it belongs to;
// two steps off, or a malformed code, is not.
func TestTOTPWindow(t *testing.T) {
	key, err := secret.ParseKey(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	otpKey, err := totp.Generate(totp.GenerateOpts{Issuer: "Airside", AccountName: "a@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := box.Seal(otpKey.URL(), secretBinding(7))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 9, 0, 15, 0, time.UTC)
	tf := &TwoFactor{Secrets: box, Now: func() time.Time { return now }}
	step := now.Unix() / 30
	for _, test := range []struct {
		name     string
		offset   time.Duration
		mangle   func(string) string
		wantOK   bool
		wantStep int64
	}{
		{"this step", 0, nil, true, step},
		{"the phone 30 s behind", -30 * time.Second, nil, true, step - 1},
		{"the phone 30 s ahead", 30 * time.Second, nil, true, step + 1},
		{"a minute behind", -60 * time.Second, nil, false, 0},
		{"a minute ahead", 60 * time.Second, nil, false, 0},
		{"typed with a space", 0, func(c string) string { return c[:3] + " " + c[3:] }, true, step},
		{"five digits", 0, func(c string) string { return c[:5] }, false, 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			code, err := CodeAt(otpKey.Secret(), now.Add(test.offset))
			if err != nil {
				t.Fatal(err)
			}
			if test.mangle != nil {
				code = test.mangle(code)
			}
			got, ok, err := tf.match(sealed, 7, code)
			if err != nil {
				t.Fatal(err)
			}
			if ok != test.wantOK || got != test.wantStep {
				t.Errorf("match = step %d, %v; want step %d, %v", got, ok, test.wantStep, test.wantOK)
			}
		})
	}
	// Sealed for another person, the secret does not open.
	if _, _, err := tf.match(sealed, 8, "123456"); err == nil {
		t.Error("a secret sealed for one person opened for another")
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != RecoveryCodeCount || len(hashes) != RecoveryCodeCount {
		t.Fatalf("%d codes, %d hashes", len(codes), len(hashes))
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if seen[c] {
			t.Errorf("code %q twice", c)
		}
		seen[c] = true
		if !looksLikeRecoveryCode(c) {
			t.Errorf("%q is not recognised as a recovery code", c)
		}
		for _, typed := range []string{c, " " + c + " ", toUpper(c), c[:5] + c[6:]} {
			if HashToken(normalizeRecoveryCode(typed)) != hashes[i] {
				t.Errorf("%q typed as %q does not match its hash", c, typed)
			}
		}
	}
	for _, notOne := range []string{"123456", "abcde-fghj", "abcde-fghjkl", "abcde-fghj1"} {
		if looksLikeRecoveryCode(notOne) {
			t.Errorf("%q taken for a recovery code", notOne)
		}
	}
}

func toUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
