package alerting

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/workflow"
)

// HookStore is what webhook management needs from storage.
type HookStore interface {
	SetWebhook(ctx context.Context, actorID, carrierID int64, url, secretSealed string, keepPrevious time.Duration) error
	RotateWebhookSecret(ctx context.Context, actorID, carrierID int64, secretSealed string, keepPrevious time.Duration) error
	DeleteWebhook(ctx context.Context, actorID, carrierID int64) error
	QueueTestEvent(ctx context.Context, carrierID int64) error
	ResendDelivery(ctx context.Context, actorID, carrierID, deliveryID int64) error
}

// URLChecker is the outbound-address rule (netguard.Guard).
type URLChecker interface {
	CheckURL(raw string) (*url.URL, error)
}

// Hooks lets a carrier's admins set, test and remove its webhook.
type Hooks struct {
	Store    HookStore
	Secrets  *secret.Box
	Outbound URLChecker
}

// RotationOverlap is how long a replaced signing secret keeps signing: every
// delivery meanwhile carries a signature with each secret (Standard
// Webhooks' rotation), so a carrier deploys the new secret within a day
// without refusing one delivery.
const RotationOverlap = 24 * time.Hour

// secretBinding binds a sealed webhook secret to its carrier.
func secretBinding(carrierID int64) string { return fmt.Sprintf("webhook:%d", carrierID) }

// OpenSecret unseals a carrier's webhook secret (for the sender).
func (h *Hooks) OpenSecret(sealed string, carrierID int64) (string, error) {
	return h.Secrets.Open(sealed, secretBinding(carrierID))
}

func authorizeHooks(p *account.Principal, carrierID int64) error {
	if !workflow.CanFileFor(p, carrierID) {
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if !workflow.CanManageListings(p, carrierID) {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins manage its webhook.")
	}
	return nil
}

// AcceptsLocal reports whether this portal sends to plain http and private
// addresses (the demo, or AIRSIDE_PREFLIGHT_ALLOW_PRIVATE): the form then
// says so, rather than asking for https and taking http.
func (h *Hooks) AcceptsLocal() bool {
	_, err := h.Outbound.CheckURL("http://127.0.0.1/airside")
	return err == nil
}

// Set sets the webhook's address and a new signing secret, returned once:
// the carrier copies it now, Airside shows it never again.
func (h *Hooks) Set(ctx context.Context, p *account.Principal, carrierID int64, raw string) (string, error) {
	if err := authorizeHooks(p, carrierID); err != nil {
		return "", err
	}
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > 500 {
		return "", apperr.Invalid(map[string]string{"url": "Give the https address that receives Airside's events."})
	}
	if _, err := h.Outbound.CheckURL(raw); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return "", apperr.Invalid(map[string]string{"url": "Airside cannot send to this address: " + msg + "."})
	}
	plain, sealed, err := h.newSecret(carrierID)
	if err != nil {
		return "", err
	}
	if err := h.Store.SetWebhook(ctx, p.User.ID, carrierID, raw, sealed, RotationOverlap); err != nil {
		return "", err
	}
	return plain, nil
}

// Rotate gives the webhook a new signing secret, returned once; the old one
// keeps signing for RotationOverlap beside it.
func (h *Hooks) Rotate(ctx context.Context, p *account.Principal, carrierID int64) (string, error) {
	if err := authorizeHooks(p, carrierID); err != nil {
		return "", err
	}
	plain, sealed, err := h.newSecret(carrierID)
	if err != nil {
		return "", err
	}
	if err := h.Store.RotateWebhookSecret(ctx, p.User.ID, carrierID, sealed, RotationOverlap); err != nil {
		return "", err
	}
	return plain, nil
}

// newSecret makes a signing secret in Standard Webhooks' form ("whsec_" and
// 24 random bytes in base64), and seals it to the carrier.
func (h *Hooks) newSecret(carrierID int64) (plain, sealed string, err error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("webhook secret: %w", err)
	}
	plain = "whsec_" + base64.StdEncoding.EncodeToString(b)
	if sealed, err = h.Secrets.Seal(plain, secretBinding(carrierID)); err != nil {
		return "", "", err
	}
	return plain, sealed, nil
}

// Delete removes the webhook.
func (h *Hooks) Delete(ctx context.Context, p *account.Principal, carrierID int64) error {
	if err := authorizeHooks(p, carrierID); err != nil {
		return err
	}
	return h.Store.DeleteWebhook(ctx, p.User.ID, carrierID)
}

// Test queues a test event.
func (h *Hooks) Test(ctx context.Context, p *account.Principal, carrierID int64) error {
	if err := authorizeHooks(p, carrierID); err != nil {
		return err
	}
	return h.Store.QueueTestEvent(ctx, carrierID)
}

// Resend tries a failed or waiting delivery again now (carrier admins).
func (h *Hooks) Resend(ctx context.Context, p *account.Principal, carrierID, deliveryID int64) error {
	if err := authorizeHooks(p, carrierID); err != nil {
		return err
	}
	return h.Store.ResendDelivery(ctx, p.User.ID, carrierID, deliveryID)
}
