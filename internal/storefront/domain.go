package storefront

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/workflow"
)

// TXTResolver looks up TXT records; *net.Resolver satisfies it, and tests
// inject one.
type TXTResolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// DomainVerifier checks that a carrier controls its website's domain: a
// DNS TXT record "airside-verification=TOKEN" on the domain, or the token in
// https://DOMAIN/.well-known/airside-verification.txt, fetched through the
// outbound-address rule.
type DomainVerifier struct {
	Resolver TXTResolver
	HTTP     *http.Client
	// FileURL builds the address of the verification file (tests point it
	// at a local server).
	FileURL func(domain string) string
}

var domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

// TXTRecord is what a carrier publishes in DNS.
func TXTRecord(token string) string { return "airside-verification=" + token }

// FilePath is where the verification file lives on the carrier's website.
const FilePath = "/.well-known/airside-verification.txt"

// Check looks for the token by DNS, then by the file; it returns the method
// that proved the domain, or what was found instead.
func (v *DomainVerifier) Check(ctx context.Context, domain, token string) (string, error) {
	if v.Resolver != nil {
		if records, err := v.Resolver.LookupTXT(ctx, domain); err == nil {
			for _, r := range records {
				if strings.TrimSpace(r) == TXTRecord(token) {
					return "dns", nil
				}
			}
		}
	}
	url := "https://" + domain + FilePath
	if v.FileURL != nil {
		url = v.FileURL(domain)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := v.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("neither a TXT record nor the file was found (%v)", err)
	}
	defer resp.Body.Close()
	body, _, _ := netguard.LimitedBody(resp.Body, 4096)
	if resp.StatusCode == http.StatusOK && strings.Contains(string(body), token) {
		return "file", nil
	}
	return "", fmt.Errorf("neither a TXT record nor the file holds the token (the file answered %d)", resp.StatusCode)
}

// SetDomain starts (or restarts) a carrier's domain verification with a
// fresh token; only its admins may.
func (s *Service) SetDomain(ctx context.Context, p *account.Principal, carrierID int64, domain string) error {
	if !workflow.CanManageListings(p, carrierID) {
		if workflow.CanFileFor(p, carrierID) {
			return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins verify its domain.")
		}
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), "."))
	if !domainPattern.MatchString(domain) || len(domain) > 253 {
		return apperr.Invalid(map[string]string{"domain": "Give your website's domain, like example.com (no https://, no path)."})
	}
	token, _, err := account.NewToken()
	if err != nil {
		return err
	}
	return s.Store.SetDomain(ctx, p.User.ID, carrierID, domain, token)
}

// CheckDomain checks the carrier's domain now.
func (s *Service) CheckDomain(ctx context.Context, p *account.Principal, carrierID int64) error {
	if !workflow.CanManageListings(p, carrierID) {
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	prof, err := s.Store.FindProfile(ctx, carrierID)
	if err != nil {
		return err
	}
	if prof.Domain == "" {
		return apperr.Errorf(apperr.ECONFLICT, "Give your domain first.")
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	method, err := s.Verify.Check(cctx, prof.Domain, prof.DomainToken)
	if err != nil {
		return apperr.Errorf(apperr.ECONFLICT, "Not verified yet: %v.", err)
	}
	return s.Store.MarkDomainVerified(ctx, carrierID, method)
}
