package apitoken

import (
	"testing"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

func TestACarriersTokenActsForItsIssuerWithinItsCarrierOnly(t *testing.T) {
	nebula, orbit := int64(1), int64(2)
	issuer := func(staff account.StaffRole, deactivated bool, roles map[int64]account.CarrierRole) *account.Principal {
		p := &account.Principal{User: account.User{ID: 7, Staff: staff, Deactivated: deactivated}}
		for id, r := range roles {
			p.Memberships = append(p.Memberships, account.Membership{UserID: 7, CarrierID: id, Role: r})
		}
		return p
	}
	tests := []struct {
		name   string
		token  Token
		issuer *account.Principal
		ok     bool
	}{
		{"an admin of the carrier", Token{CarrierID: &nebula}, issuer(account.StaffNone, false, map[int64]account.CarrierRole{nebula: account.CarrierAdmin}), true},
		{"admin of two carriers: acts for the token's only", Token{CarrierID: &nebula},
			issuer(account.StaffAdmin, false, map[int64]account.CarrierRole{nebula: account.CarrierAdmin, orbit: account.CarrierAdmin}), true},
		{"demoted to member", Token{CarrierID: &nebula}, issuer(account.StaffNone, false, map[int64]account.CarrierRole{nebula: account.CarrierMember}), false},
		{"removed from the carrier", Token{CarrierID: &nebula}, issuer(account.StaffNone, false, map[int64]account.CarrierRole{orbit: account.CarrierAdmin}), false},
		{"deactivated", Token{CarrierID: &nebula}, issuer(account.StaffNone, true, map[int64]account.CarrierRole{nebula: account.CarrierAdmin}), false},
		{"the issuer is gone", Token{CarrierID: &nebula}, nil, false},
		{"a gateway's token", Token{}, issuer(account.StaffAdmin, false, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var members int
			var staff account.StaffRole
			if tt.issuer != nil {
				members, staff = len(tt.issuer.Memberships), tt.issuer.User.Staff
			}
			acting, err := ActsFor(&tt.token, tt.issuer)
			if !tt.ok {
				if apperr.Code(err) != apperr.EFORBIDDEN {
					t.Errorf("err %v, want forbidden", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if acting.IsStaff() || len(acting.CarrierIDs()) != 1 || acting.CarrierIDs()[0] != nebula || acting.RoleIn(nebula) != account.CarrierAdmin {
				t.Errorf("acts as %+v: want Nebula's admin only, no staff powers", acting)
			}
			if len(tt.issuer.Memberships) != members || tt.issuer.User.Staff != staff {
				t.Error("the issuer's own principal was changed")
			}
		})
	}
}

func TestScopesAreEachKindsOwn(t *testing.T) {
	for _, sc := range CarrierScopes {
		if fields := Validate("x", []string{sc}, Scopes); fields["scopes"] == "" {
			t.Errorf("a gateway token takes the carrier scope %s", sc)
		}
		if ScopeMeanings[sc] == "" {
			t.Errorf("%s has no meaning for the page", sc)
		}
	}
	for _, sc := range Scopes {
		if fields := Validate("x", []string{sc}, CarrierScopes); fields["scopes"] == "" {
			t.Errorf("a carrier token takes the gateway scope %s", sc)
		}
	}
}
