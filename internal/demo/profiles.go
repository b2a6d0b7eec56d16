package demo

import (
	"context"
	"fmt"
	"strings"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/storefront"
)

// profileSpec is a demo carrier's public face.
type profileSpec struct {
	slug, color, blurb string
	verified           bool
}

var profiles = []profileSpec{
	{"nebula", "#1f5fbf", "H100 and H200 clusters in Frankfurt and Virginia, prefix caching on every model.", true},
	{"orbit", "#8a3ffc", "Inference on our own silicon in Ohio; DeepSeek-style off-peak pricing.", true},
	{"fathom", "#0f766e", "Vision-first deployments in Oregon.", false},
	{"lumen", "#c2410c", "Web search and structured output, served from Dublin.", false},
	{"tessera", "#a21caf", "Reasoning models with budgets, in Montréal.", false},
	{"quarry", "#4d7c0f", "The cheapest JSON in the west.", false},
	{"halcyon", "#b91c1c", "Multimodal: vision and audio input in Singapore.", false},
	{"vantage", "#334155", "Tools and JSON schema, served from São Paulo.", false},
}

// logoSVG draws a demo carrier's logo: its initial on a coloured disc. It
// passes the same check an upload does.
func logoSVG(name, color string) []byte {
	return []byte(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><title>%s</title>`+
		`<circle cx="32" cy="32" r="30" fill="%s"/><text x="32" y="42" font-size="28" font-family="sans-serif" fill="#fff" text-anchor="middle">%s</text></svg>`,
		name, color, strings.ToUpper(name[:1])))
}

// SeedProfiles gives every demo carrier a profile and a logo, and the
// first two a verified domain, so the public pages look real.
func SeedProfiles(ctx context.Context, st *store.Store) error {
	for _, p := range profiles {
		logo := logoSVG(p.slug, p.color)
		typ, problem := storefront.CheckLogo(logo)
		if problem != "" {
			return fmt.Errorf("demo logo of %s: %s", p.slug, problem)
		}
		domain := ""
		if p.verified {
			domain = p.slug + ".example"
		}
		prof := storefront.Profile{Description: p.blurb, Website: "https://" + p.slug + ".example", SupportContact: "support@" + p.slug + ".example",
			StatusURL: "https://status." + p.slug + ".example"}
		if err := st.SeedProfile(ctx, p.slug, prof, typ, logo, domain); err != nil {
			return fmt.Errorf("seed profile of %s: %w", p.slug, err)
		}
	}
	return nil
}
