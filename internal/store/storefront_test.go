package store_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/storefront"
)

func storefrontService(t *testing.T, s *store.Store) *storefront.Service {
	t.Helper()
	key, _ := secret.ParseKey(secret.NewKey())
	box, _ := secret.New(key)
	return &storefront.Service{Store: s, Secrets: box, Now: s.Now, Verify: &storefront.DomainVerifier{HTTP: netguard.New(true).Client(5 * time.Second)}}
}

func staffPrincipal(t *testing.T, s *store.Store, email string, role account.StaffRole) *account.Principal {
	t.Helper()
	u, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: email, Password: "long enough pw", Staff: role})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.FindPrincipal(ctx, u.ID)
	return p
}

// TestStorefrontOnBothDatabases: an application becomes a carrier with an
// invite; a proposal becomes a model; a profile change becomes the profile
// only once approved; a domain is proved by its file.
func TestStorefrontOnBothDatabases(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		svc := storefrontService(t, s)
		admin := staffPrincipal(t, s, "admin@airside.example", account.StaffAdmin)
		reviewer := staffPrincipal(t, s, "rev@airside.example", account.StaffReviewer)
		token, err := svc.Apply(ctx, "203.0.113.9", storefront.ApplicationForm{Company: "Zephyr Compute", Website: "https://zephyr.example",
			ContactName: "Zoe", ContactEmail: "zoe@zephyr.example", Models: "kimi-k2.5", Description: "H100s."})
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := svc.ByToken(ctx, token)
		if err != nil || a.State != storefront.Submitted {
			t.Fatalf("application %+v, %v", a, err)
		}
		if err := svc.Approve(ctx, reviewer, a.ID, "zephyr", ""); apperr.Code(err) != apperr.EFORBIDDEN {
			t.Errorf("a reviewer approved a carrier: %v", err)
		}
		if err := svc.Approve(ctx, admin, a.ID, "zephyr", ""); err != nil {
			t.Fatal(err)
		}
		a, _, _ = svc.ByToken(ctx, token)
		link := svc.InviteLink(a)
		inv, err := account.NewService(s).FindInvite(ctx, link)
		if err != nil || inv.Email != "zoe@zephyr.example" || inv.Carrier.Slug != "zephyr" {
			t.Fatalf("the approval's invite: %+v, %v", inv, err)
		}
		if err := svc.Approve(ctx, admin, a.ID, "zephyr2", ""); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("approved twice: %v", err)
		}
		zoe, err := account.NewService(s).AcceptInvite(ctx, link, "Zoe", "a long passphrase for zoe")
		if err != nil {
			t.Fatal(err)
		}
		zp, _ := s.FindPrincipal(ctx, zoe.ID)
		carrierID := zp.Memberships[0].CarrierID

		// A proposal, accepted with an edited slug.
		id, err := svc.Propose(ctx, zp, carrierID, storefront.ProposalForm{Name: "Qwen3 Coder", Slug: "qwen3-coder", ContextTokens: "262144",
			MaxOutputTokens: "65536", InputModalities: []string{"text"}, OutputModalities: []string{"text"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.DecideProposal(ctx, reviewer, id, true, storefront.ProposalForm{Name: "Qwen3 Coder 480B", Slug: "qwen3-coder-480b",
			ContextTokens: "262144", MaxOutputTokens: "65536", InputModalities: []string{"text"}, OutputModalities: []string{"text"}}, ""); err != nil {
			t.Fatal(err)
		}
		models, _ := s.FindModels(ctx)
		found := false
		for _, m := range models {
			found = found || m.Slug == "qwen3-coder-480b" && m.MaxOutputTokens == 65536
		}
		if !found {
			t.Error("the accepted model is not in the catalogue as edited")
		}

		// A profile change is not the profile until a reviewer approves it.
		chID, err := svc.SubmitProfile(ctx, zp, carrierID, storefront.ProfileForm{Description: "Fast.", Website: "https://zephyr.example"})
		if err != nil {
			t.Fatal(err)
		}
		if prof, _ := s.FindProfile(ctx, carrierID); prof.Description != "" {
			t.Error("an unreviewed profile change is public")
		}
		if err := svc.DecideProfile(ctx, reviewer, chID, true, ""); err != nil {
			t.Fatal(err)
		}
		if prof, _ := s.FindProfile(ctx, carrierID); prof.Description != "Fast." {
			t.Errorf("the approved profile: %+v", prof)
		}

		// The domain, proved by the well-known file.
		if err := svc.SetDomain(ctx, zp, carrierID, "https://zephyr.example/"); apperr.Code(err) != apperr.EINVALID {
			t.Errorf("a URL taken for a domain: %v", err)
		}
		if err := svc.SetDomain(ctx, zp, carrierID, "zephyr.example"); err != nil {
			t.Fatal(err)
		}
		prof, _ := s.FindProfile(ctx, carrierID)
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == storefront.FilePath {
				_, _ = w.Write([]byte(prof.DomainToken + "\n"))
				return
			}
			http.NotFound(w, r)
		}))
		defer site.Close()
		svc.Verify.FileURL = func(string) string { return site.URL + "/nothing-here" }
		if err := svc.CheckDomain(ctx, zp, carrierID); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("a domain without the token verified: %v", err)
		}
		svc.Verify.FileURL = func(string) string { return site.URL + storefront.FilePath }
		if err := svc.CheckDomain(ctx, zp, carrierID); err != nil {
			t.Fatal(err)
		}
		if prof, _ := s.FindProfile(ctx, carrierID); prof.DomainVerifiedAt == nil {
			t.Error("the domain is not verified after its file was found")
		}
	})
}
