package account

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"image/png"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/secret"
)

// Two-factor sign-in: a time-based one-time password (RFC 6238, the codes
// every authenticator app shows) after the password, or one of ten one-time
// recovery codes. pquerna/otp makes the secrets, the otpauth:// URL and the
// QR code and computes the codes; replay protection, recovery codes,
// remembered browsers and the site policy are ours.

// TOTP parameters every authenticator app understands.
const (
	totpPeriod = 30 * time.Second
	totpSkew   = 1 // one step either side: a phone clock 30 s off still works
	totpDigits = otp.DigitsSix
)

// RecoveryCodeCount is how many recovery codes a person gets at a time.
const RecoveryCodeCount = 10

// RememberDeviceFor is how long a browser the person asked to remember skips
// the code.
const RememberDeviceFor = 30 * 24 * time.Hour

// TwoFactorState is what the store keeps about a person's second factor.
type TwoFactorState struct {
	// SealedSecret is the TOTP secret, sealed ("" when none was set up).
	SealedSecret string
	// EnabledAt is when the person proved their authenticator (nil: set up
	// but not confirmed, or none).
	EnabledAt *time.Time
	// RecoveryLeft is how many unused recovery codes remain.
	RecoveryLeft int
}

// Enabled reports whether sign-in asks for the second factor.
func (s TwoFactorState) Enabled() bool { return s.EnabledAt != nil && s.SealedSecret != "" }

// TwoFactorStore is what two-factor sign-in needs from storage. Every write
// is audited by the store in the same transaction.
type TwoFactorStore interface {
	TwoFactorState(ctx context.Context, userID int64) (*TwoFactorState, error)
	// BeginTwoFactor keeps a new, not yet confirmed secret (replacing an
	// unconfirmed one; refused when one is enabled).
	BeginTwoFactor(ctx context.Context, userID int64, sealed string) error
	// EnableTwoFactor confirms the secret, records the step the confirming
	// code used, and replaces the recovery codes.
	EnableTwoFactor(ctx context.Context, userID, step int64, codeHashes []string) error
	// DisableTwoFactor forgets the secret, the recovery codes and the
	// remembered browsers (actorID: who did it, the person or an admin).
	DisableTwoFactor(ctx context.Context, actorID, userID int64) error
	// ReplaceRecoveryCodes swaps every recovery code for new ones.
	ReplaceRecoveryCodes(ctx context.Context, userID int64, codeHashes []string) error
	// UseTOTPStep records step as used unless it or a later one was:
	// false means the code was already spent.
	UseTOTPStep(ctx context.Context, userID, step int64) (bool, error)
	// UseRecoveryCode spends an unused code: false when there is none.
	UseRecoveryCode(ctx context.Context, userID int64, codeHash string) (bool, error)
	// RememberTwoFactorDevice lets a known browser skip the code until.
	RememberTwoFactorDevice(ctx context.Context, userID int64, deviceHash string, until time.Time) error
	// TwoFactorDeviceRemembered reports whether the browser skips the code at.
	TwoFactorDeviceRemembered(ctx context.Context, userID int64, deviceHash string, at time.Time) (bool, error)
	// RememberedBrowsers lists the browsers that skip the code at a moment
	// (currentHash marks the one asking).
	RememberedBrowsers(ctx context.Context, userID int64, currentHash string, at time.Time) ([]RememberedBrowser, error)
	// ForgetRememberedBrowsers makes every browser of the person ask for the
	// code again, audited.
	ForgetRememberedBrowsers(ctx context.Context, userID int64) (int64, error)
	// SetTwoFactorRequired sets the site policy, audited under actorID.
	SetTwoFactorRequired(ctx context.Context, actorID int64, on bool) error
	TwoFactorRequired(ctx context.Context) (bool, error)
	// The login throttle, shared with passwords: code guesses are held back
	// like password guesses.
	ReserveLoginAttempt(ctx context.Context, subject string, policy ThrottlePolicy) (time.Duration, error)
	ClearLoginThrottle(ctx context.Context, subject string) error
	RecordAudit(ctx context.Context, actorID *int64, action, subjectType string, subjectID int64, after map[string]any) error
}

// RememberedBrowser is a browser that skips the code until a moment.
type RememberedBrowser struct {
	// FirstSeen is the browser's first sign-in to the portal.
	FirstSeen time.Time
	Until     time.Time
	// Current is the browser showing the list.
	Current bool
}

// TwoFactor runs enrolment and the second step of sign-in.
type TwoFactor struct {
	Store   TwoFactorStore
	Secrets *secret.Box
	Now     func() time.Time
	// Issuer names the portal in authenticator apps ("Airside").
	Issuer string
}

// Enrolment is a secret being set up: what the person scans or types.
type Enrolment struct {
	// Secret is the base32 secret, for typing into an app by hand.
	Secret string
	// URL is the otpauth:// URL the QR code carries.
	URL string
	// QRDataURL is the QR code as a PNG data: URL (the CSP allows data:
	// images; no third party sees the secret).
	QRDataURL string
}

func (t *TwoFactor) issuer() string {
	if t.Issuer == "" {
		return "Airside"
	}
	return t.Issuer
}

func secretBinding(userID int64) string { return "totp:" + strconv.FormatInt(userID, 10) }

// State is p's second factor as the account page shows it.
func (t *TwoFactor) State(ctx context.Context, userID int64) (*TwoFactorState, error) {
	st, err := t.Store.TwoFactorState(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("two-factor state: %w", err)
	}
	return st, nil
}

// Begin makes a new secret for p, kept unconfirmed until a code proves the
// person's app has it. Asking again replaces an unconfirmed secret.
func (t *TwoFactor) Begin(ctx context.Context, p *Principal) (*Enrolment, error) {
	st, err := t.State(ctx, p.User.ID)
	if err != nil {
		return nil, err
	}
	if st.Enabled() {
		return nil, apperr.Errorf(apperr.ECONFLICT, "Two-factor sign-in is already on. Turn it off first to move it to another app.")
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: t.issuer(), AccountName: p.User.Email, Period: uint(totpPeriod.Seconds()),
		Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, fmt.Errorf("two-factor secret: %w", err)
	}
	// The whole otpauth:// URL is sealed: it carries the secret and the
	// parameters, so the enrolment page can show the same QR code again.
	sealed, err := t.Secrets.Seal(key.URL(), secretBinding(p.User.ID))
	if err != nil {
		return nil, fmt.Errorf("seal two-factor secret: %w", err)
	}
	if err := t.Store.BeginTwoFactor(ctx, p.User.ID, sealed); err != nil {
		return nil, fmt.Errorf("begin two-factor: %w", err)
	}
	return enrolmentOf(key)
}

// Pending shows the unconfirmed secret again (nil when there is none), so
// a reload of the enrolment page does not make the scanned code useless.
func (t *TwoFactor) Pending(ctx context.Context, p *Principal) (*Enrolment, error) {
	st, err := t.State(ctx, p.User.ID)
	if err != nil || st.Enabled() || st.SealedSecret == "" {
		return nil, err
	}
	key, err := t.openKey(st.SealedSecret, p.User.ID)
	if err != nil {
		return nil, err
	}
	return enrolmentOf(key)
}

func (t *TwoFactor) openKey(sealed string, userID int64) (*otp.Key, error) {
	plain, err := t.Secrets.Open(sealed, secretBinding(userID))
	if err != nil {
		return nil, fmt.Errorf("open two-factor secret: %w", err)
	}
	key, err := otp.NewKeyFromURL(plain)
	if err != nil {
		return nil, fmt.Errorf("two-factor key: %w", err)
	}
	return key, nil
}

func enrolmentOf(key *otp.Key) (*Enrolment, error) {
	img, err := key.Image(240, 240)
	if err != nil {
		return nil, fmt.Errorf("two-factor QR code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("two-factor QR code: %w", err)
	}
	return &Enrolment{Secret: key.Secret(), URL: key.URL(),
		QRDataURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}, nil
}

// Confirm turns two-factor sign-in on once code proves the app has the
// secret, and returns the recovery codes to show once.
func (t *TwoFactor) Confirm(ctx context.Context, p *Principal, code string) ([]string, error) {
	st, err := t.State(ctx, p.User.ID)
	if err != nil {
		return nil, err
	}
	if st.Enabled() {
		return nil, apperr.Errorf(apperr.ECONFLICT, "Two-factor sign-in is already on.")
	}
	if st.SealedSecret == "" {
		return nil, apperr.Invalid(map[string]string{"code": "Start again: there is no authenticator being set up."})
	}
	if err := t.reserve(ctx, p.User.ID); err != nil {
		return nil, err
	}
	step, ok, err := t.match(st.SealedSecret, p.User.ID, code)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.Invalid(map[string]string{"code": "That code does not match. Type the 6 digits your app shows now for Airside."})
	}
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	if err := t.Store.EnableTwoFactor(ctx, p.User.ID, step, hashes); err != nil {
		return nil, fmt.Errorf("enable two-factor: %w", err)
	}
	_ = t.Store.ClearLoginThrottle(ctx, throttleKey(p.User.ID))
	return codes, nil
}

// Disable turns p's second factor off. A site that requires it refuses
// when p is someone it is required of, before anything is checked or spent.
// Otherwise it takes proof that p is at the keyboard (ConfirmPresence): a
// session left open must not be enough to strip the account's second
// factor.
func (t *TwoFactor) Disable(ctx context.Context, p *Principal, proof string) error {
	required, err := t.Required(ctx, p)
	if err != nil {
		return err
	}
	if required {
		return apperr.Errorf(apperr.EFORBIDDEN, "Two-factor sign-in is required for your role on this portal; it cannot be turned off. "+
			"To move it to a new phone, ask a gateway admin to reset it.")
	}
	st, err := t.State(ctx, p.User.ID)
	if err != nil {
		return err
	}
	if !st.Enabled() {
		return apperr.Errorf(apperr.ECONFLICT, "Two-factor sign-in is already off.")
	}
	if err := t.ConfirmPresence(ctx, p, st, proof); err != nil {
		return err
	}
	return t.Store.DisableTwoFactor(ctx, p.User.ID, p.User.ID)
}

// ConfirmPresence checks that the person at the keyboard is p and not only
// p's session, before two-factor itself changes: a current code from the
// authenticator (spent, so it cannot be used twice) or p's password. A
// recovery code is refused: it signs in, it does not change two-factor (a
// session left open could otherwise mint new codes, then spend one to turn
// two-factor off). Guesses share the sign-in code throttle.
func (t *TwoFactor) ConfirmPresence(ctx context.Context, p *Principal, st *TwoFactorState, proof string) error {
	proof = strings.TrimSpace(proof)
	if proof == "" {
		return apperr.Errorf(apperr.EUNAUTHORIZED, "Type the code your authenticator app shows now, or your password.")
	}
	if err := t.reserve(ctx, p.User.ID); err != nil {
		return err
	}
	if looksLikeRecoveryCode(proof) {
		return t.refused(ctx, p.User.ID, "A recovery code signs you in; it does not change two-factor sign-in. "+
			"Type the code your authenticator app shows now, or your password.")
	}
	if step, ok, err := t.match(st.SealedSecret, p.User.ID, proof); err != nil {
		return err
	} else if ok {
		fresh, err := t.Store.UseTOTPStep(ctx, p.User.ID, step)
		if err != nil {
			return fmt.Errorf("two-factor step: %w", err)
		}
		if !fresh {
			return t.refused(ctx, p.User.ID, "That code was used already. Wait for your app to show the next one.")
		}
	} else if ok, err := VerifyPassword(ctx, p.User.PasswordHash, proof); err != nil {
		return err
	} else if !ok {
		return t.refused(ctx, p.User.ID, "That is neither the code your app shows now nor your password.")
	}
	_ = t.Store.ClearLoginThrottle(ctx, throttleKey(p.User.ID))
	return nil
}

// Reset turns someone's second factor off for them (a gateway admin, for a
// person who lost their phone and codes); they set it up again at their
// next sign-in when the site requires it.
func (t *TwoFactor) Reset(ctx context.Context, admin *Principal, userID int64) error {
	if !admin.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins reset someone's two-factor sign-in.")
	}
	if userID == admin.User.ID {
		return apperr.Errorf(apperr.EFORBIDDEN, "Reset your own two-factor sign-in from your account page, or ask another admin.")
	}
	return t.Store.DisableTwoFactor(ctx, admin.User.ID, userID)
}

// NewRecoveryCodes replaces p's recovery codes (the old ones stop working)
// and returns the new ones to show once, after proof that p is at the
// keyboard (ConfirmPresence).
func (t *TwoFactor) NewRecoveryCodes(ctx context.Context, p *Principal, proof string) ([]string, error) {
	st, err := t.State(ctx, p.User.ID)
	if err != nil {
		return nil, err
	}
	if !st.Enabled() {
		return nil, apperr.Errorf(apperr.ECONFLICT, "Turn two-factor sign-in on first.")
	}
	if err := t.ConfirmPresence(ctx, p, st, proof); err != nil {
		return nil, err
	}
	codes, hashes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	if err := t.Store.ReplaceRecoveryCodes(ctx, p.User.ID, hashes); err != nil {
		return nil, fmt.Errorf("new recovery codes: %w", err)
	}
	return codes, nil
}

// Required reports whether the site requires a second factor of p: gateway
// staff and carriers' admins, everyone who can move money or approve it,
// once a gateway admin turned the policy on.
func (t *TwoFactor) Required(ctx context.Context, p *Principal) (bool, error) {
	if !RequiresTwoFactorRole(p) {
		return false, nil
	}
	return t.Store.TwoFactorRequired(ctx)
}

// RequiresTwoFactorRole reports whether the policy covers p: staff, and
// admins of any carrier.
func RequiresTwoFactorRole(p *Principal) bool {
	if p.IsStaff() {
		return true
	}
	for _, m := range p.Memberships {
		if m.Role == CarrierAdmin {
			return true
		}
	}
	return false
}

// SetRequired sets the site policy (gateway admins only). An admin without
// a second factor cannot require one: they would lock themselves out of
// everything but the enrolment page.
func (t *TwoFactor) SetRequired(ctx context.Context, admin *Principal, on bool) error {
	if !admin.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins set the two-factor policy.")
	}
	if on {
		st, err := t.State(ctx, admin.User.ID)
		if err != nil {
			return err
		}
		if !st.Enabled() {
			return apperr.Errorf(apperr.ECONFLICT, "Turn on two-factor sign-in for your own account first (Your account), then require it of others.")
		}
	}
	return t.Store.SetTwoFactorRequired(ctx, admin.User.ID, on)
}

// NeedsCode reports whether a sign-in from the browser with deviceToken
// must give a code: the person has a second factor and has not asked this
// browser to be remembered (or that has run out).
func (t *TwoFactor) NeedsCode(ctx context.Context, userID int64, deviceToken string) (bool, error) {
	st, err := t.State(ctx, userID)
	if err != nil || !st.Enabled() {
		return false, err
	}
	if deviceToken == "" {
		return true, nil
	}
	remembered, err := t.Store.TwoFactorDeviceRemembered(ctx, userID, HashToken(deviceToken), t.Now())
	if err != nil {
		return false, fmt.Errorf("remembered browser: %w", err)
	}
	return !remembered, nil
}

// RememberedBrowsers lists p's browsers that skip the code now;
// currentHash is the hash of the asking browser's device token.
func (t *TwoFactor) RememberedBrowsers(ctx context.Context, p *Principal, currentHash string) ([]RememberedBrowser, error) {
	return t.Store.RememberedBrowsers(ctx, p.User.ID, currentHash, t.Now())
}

// ForgetRememberedBrowsers makes every browser of p's ask for the code at
// its next sign-in; it returns how many were remembered.
func (t *TwoFactor) ForgetRememberedBrowsers(ctx context.Context, p *Principal) (int64, error) {
	return t.Store.ForgetRememberedBrowsers(ctx, p.User.ID)
}

// SecondStep is the code a person types after their password.
type SecondStep struct {
	UserID int64
	// Code is the app's 6 digits or a recovery code.
	Code string
	// Remember asks that this browser (DeviceToken) skip the code for
	// RememberDeviceFor.
	Remember    bool
	DeviceToken string
}

// Verify checks the second step. Guesses are throttled like passwords; a
// code is accepted once; a recovery code is spent.
func (t *TwoFactor) Verify(ctx context.Context, in SecondStep) error {
	st, err := t.State(ctx, in.UserID)
	if err != nil {
		return err
	}
	if !st.Enabled() {
		return nil // turned off (an admin reset) between the two steps
	}
	if err := t.reserve(ctx, in.UserID); err != nil {
		return err
	}
	usedRecovery := false
	code := strings.TrimSpace(in.Code)
	if looksLikeRecoveryCode(code) {
		ok, err := t.Store.UseRecoveryCode(ctx, in.UserID, HashToken(normalizeRecoveryCode(code)))
		if err != nil {
			return fmt.Errorf("recovery code: %w", err)
		}
		if !ok {
			return t.refused(ctx, in.UserID, "That recovery code is not one of yours, or it was used already.")
		}
		usedRecovery = true
	} else {
		step, ok, err := t.match(st.SealedSecret, in.UserID, code)
		if err != nil {
			return err
		}
		if !ok {
			return t.refused(ctx, in.UserID, "That code does not match. Type the 6 digits your app shows now, or a recovery code.")
		}
		fresh, err := t.Store.UseTOTPStep(ctx, in.UserID, step)
		if err != nil {
			return fmt.Errorf("two-factor step: %w", err)
		}
		if !fresh {
			return t.refused(ctx, in.UserID, "That code was used already. Wait for your app to show the next one.")
		}
	}
	_ = t.Store.ClearLoginThrottle(ctx, throttleKey(in.UserID))
	if in.Remember && in.DeviceToken != "" {
		if err := t.Store.RememberTwoFactorDevice(ctx, in.UserID, HashToken(in.DeviceToken), t.Now().Add(RememberDeviceFor)); err != nil {
			return fmt.Errorf("remember browser: %w", err)
		}
	}
	_ = t.Store.RecordAudit(ctx, &in.UserID, "login.two_factor", "user", in.UserID,
		map[string]any{"recoveryCode": usedRecovery, "rememberBrowser": in.Remember})
	return nil
}

func (t *TwoFactor) refused(ctx context.Context, userID int64, msg string) error {
	_ = t.Store.RecordAudit(ctx, &userID, "login.two_factor_fail", "user", userID, nil)
	return apperr.Errorf(apperr.EUNAUTHORIZED, "%s", msg)
}

func throttleKey(userID int64) string { return "two-factor:" + strconv.FormatInt(userID, 10) }

// reserve counts one code guess against the person: six digits fall to a
// million guesses, so they get the password's throttle.
func (t *TwoFactor) reserve(ctx context.Context, userID int64) error {
	wait, err := t.Store.ReserveLoginAttempt(ctx, throttleKey(userID), AccountThrottle)
	if err != nil {
		return fmt.Errorf("two-factor throttle: %w", err)
	}
	if wait > 0 {
		return ErrThrottled(wait)
	}
	return nil
}

// match finds the step within the skew whose code is the one typed.
func (t *TwoFactor) match(sealed string, userID int64, code string) (int64, bool, error) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != totpDigits.Length() {
		return 0, false, nil
	}
	key, err := t.openKey(sealed, userID)
	if err != nil {
		return 0, false, err
	}
	plain := key.Secret()
	now := t.Now()
	current := now.Unix() / int64(totpPeriod.Seconds())
	for d := -totpSkew; d <= totpSkew; d++ {
		step := current + int64(d)
		want, err := CodeAt(plain, time.Unix(step*int64(totpPeriod.Seconds()), 0))
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true, nil
		}
	}
	return 0, false, nil
}

// CodeAt is the code an authenticator shows for secret at a moment (tests
// and the demo use it to play the phone).
func CodeAt(secret string, at time.Time) (string, error) {
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: uint(totpPeriod.Seconds()), Digits: totpDigits,
		Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", fmt.Errorf("two-factor code: %w", err)
	}
	return code, nil
}

// Recovery codes are ten characters of an unambiguous alphabet (about 50
// bits each), shown as xxxxx-xxxxx. High entropy makes a plain SHA-256 a
// safe stored form.
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

func newRecoveryCodes() (codes, hashes []string, err error) {
	for range RecoveryCodeCount {
		var sb strings.Builder
		for i := 0; i < 10; i++ {
			if i == 5 {
				sb.WriteByte('-')
			}
			n, err := rand.Int(rand.Reader, big.NewInt(int64(len(recoveryAlphabet))))
			if err != nil {
				return nil, nil, fmt.Errorf("recovery codes: %w", err)
			}
			sb.WriteByte(recoveryAlphabet[n.Int64()])
		}
		code := sb.String()
		codes = append(codes, code)
		hashes = append(hashes, HashToken(normalizeRecoveryCode(code)))
	}
	return codes, hashes, nil
}

// normalizeRecoveryCode is the form hashed: lower case, without the dash or
// spaces people add when they copy it.
func normalizeRecoveryCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ':
			return -1
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return r
	}, code)
}

// looksLikeRecoveryCode tells a recovery code from an app's six digits.
// IsRecoveryCode reports whether what was typed at the second step is a
// recovery code rather than the app's digits.
func IsRecoveryCode(code string) bool { return looksLikeRecoveryCode(strings.TrimSpace(code)) }

func looksLikeRecoveryCode(code string) bool {
	n := normalizeRecoveryCode(code)
	if len(n) != 10 {
		return false
	}
	for _, r := range n {
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return false
		}
	}
	return true
}
