package storefront

import "testing"

// TestDecidingAProfileChange: an approval publishes every field the change
// proposes, its logo only when it brought one; a decline publishes nothing;
// the carrier is told which (a decline with the reviewer's reason).
func TestDecidingAProfileChange(t *testing.T) {
	withLogo := ProfileChange{ID: 3, CarrierID: 9, Description: "Fast GPUs", Website: "https://nebula.example", SupportContact: "ops@nebula.example",
		StatusURL: "https://status.nebula.example", LogoType: "image/png", Logo: []byte{1, 2, 3}}
	withoutLogo := withLogo
	withoutLogo.LogoType, withoutLogo.Logo = "", nil
	tests := []struct {
		name     string
		change   ProfileChange
		approve  bool
		state    string
		logoType string
	}{
		{"approved with a logo", withLogo, true, Approved, "image/png"},
		{"approved without one keeps the logo", withoutLogo, true, Approved, ""},
		{"declined", withLogo, false, Declined, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.change.Decide(tt.approve, "looks right")
			if d.State != tt.state || d.Note != "looks right" || d.Message != ProfileDecided(tt.approve, "looks right") {
				t.Errorf("decision %+v", d)
			}
			if !tt.approve {
				if d.Publish != nil {
					t.Errorf("a decline publishes %+v", d.Publish)
				}
				return
			}
			p := d.Publish
			if p == nil || p.Description != tt.change.Description || p.Website != tt.change.Website ||
				p.SupportContact != tt.change.SupportContact || p.StatusURL != tt.change.StatusURL || p.LogoType != tt.logoType {
				t.Errorf("published %+v from %+v", p, tt.change)
			}
		})
	}
}
