// Package gateway is Airside's reference gateway: an OpenAI-compatible
// endpoint for a gateway's own customers (projects with API keys) that
// routes each request to a carrier the way the seeds describe. It uses the
// portal exactly as any gateway would: the catalogue through the generated
// client (ETag revalidation and the long-poll change feed), carriers' keys
// with credentials:read, and what it measured posted back to /metrics. Each
// request is elected by internal/election and moved by the rules of
// internal/traffic, the same packages the portal's preview uses.
package gateway

import (
	"errors"
	"fmt"
	"os"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// Config is the gateway's configuration file.
type Config struct {
	// Projects are the gateway's customers.
	Projects []Project `json:"projects"`
	// Organisations is what the gateway tells the portal of its customers'
	// organisations, per listing and minute: "pseudonym" (the default),
	// "name" or "none" (OrgsPseudonym, OrgsName, OrgsNone).
	Organisations string `json:"organisations,omitempty"`
	// OrgPseudonymKey keys the pseudonyms (at least 16 characters); empty,
	// a key derived from the projects' API keys (pseudonyms then change when
	// a key is rotated).
	OrgPseudonymKey string `json:"orgPseudonymKey,omitempty"`
}

// Project is one customer of the gateway: its API key, its organisation
// (for per-organisation rate caps) and the Enterprise overrides of the
// cache figures its elections use.
type Project struct {
	Name         string `json:"name"`
	APIKey       string `json:"apiKey"`
	Organisation string `json:"organisation"`
	// CacheHitRate and CacheOutputRatio override what the gateway learned
	// of the project's traffic (seed 001's Enterprise overrides).
	CacheHitRate     *float64 `json:"cacheHitRate"`
	CacheOutputRatio *float64 `json:"cacheOutputRatio"`
	// Policy is how the project's requests are spread: "election" (the
	// default) or "share" (election.md sec. 8, seed 004).
	Policy string `json:"policy,omitempty"`
	// Provider is the project's default provider object (election.md sec.
	// 7): a request's own object wins field by field.
	Provider *election.ProviderInput `json:"provider,omitempty"`
	// Regions is the project's data residency: its requests go only to
	// listings served from one of these ISO codes.
	Regions []string `json:"regions,omitempty"`
}

// policy is the project's routing policy.
func (p *Project) policy() election.Policy {
	pol, _ := election.ParsePolicy(p.Policy)
	return pol
}

// LoadConfig reads and checks a configuration file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gateway config: %w", err)
	}
	return ParseConfig(data)
}

// ParseConfig reads and checks a configuration: unknown keys are refused
// (a typo must not silently drop an override), names match exactly ("ApiKey"
// is unknown, as the portal's API reads names) and a name twice is refused.
func ParseConfig(data []byte) (*Config, error) {
	var cfg Config
	if err := jsonv2.Unmarshal(data, &cfg, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	return &cfg, nil
}

// Validate checks every project has a name and a key of its own, and that
// overrides are rates.
func (c *Config) Validate() error {
	if len(c.Projects) == 0 {
		return errors.New("no projects: add at least one {name, apiKey}")
	}
	switch {
	case c.Organisations != "" && c.Organisations != OrgsPseudonym && c.Organisations != OrgsName && c.Organisations != OrgsNone:
		return fmt.Errorf("organisations must be pseudonym, name or none, not %q", c.Organisations)
	case c.OrgPseudonymKey != "" && len(c.OrgPseudonymKey) < 16:
		return errors.New("orgPseudonymKey must be at least 16 characters")
	}
	names, keys := map[string]bool{}, map[string]bool{}
	for i, p := range c.Projects {
		switch {
		case p.Name == "":
			return fmt.Errorf("projects[%d]: name is required", i)
		case len(p.APIKey) < 8:
			return fmt.Errorf("projects[%d] (%s): apiKey must be at least 8 characters", i, p.Name)
		case names[p.Name]:
			return fmt.Errorf("projects[%d]: the name %q is used twice", i, p.Name)
		case keys[p.APIKey]:
			return fmt.Errorf("projects[%d] (%s): the apiKey is another project's", i, p.Name)
		case p.CacheHitRate != nil && (*p.CacheHitRate < 0 || *p.CacheHitRate > 1):
			return fmt.Errorf("projects[%d] (%s): cacheHitRate must be between 0 and 1", i, p.Name)
		case p.CacheOutputRatio != nil && !(*p.CacheOutputRatio >= 0 && *p.CacheOutputRatio <= catalogue.MaxDeclaredOutputRatio):
			// The bound is the portal's (it is reported with the project's
			// minutes, and a report past it would be refused whole).
			return fmt.Errorf("projects[%d] (%s): cacheOutputRatio must be between 0 and %d", i, p.Name, catalogue.MaxDeclaredOutputRatio)
		case p.Policy != "" && !validPolicy(p.Policy):
			return fmt.Errorf("projects[%d] (%s): policy must be election or share", i, p.Name)
		}
		if p.Provider != nil {
			if _, _, err := p.Provider.Provider("provider"); err != nil {
				return fmt.Errorf("projects[%d] (%s): %w", i, p.Name, err)
			}
		}
		for _, r := range p.Regions {
			if !election.ValidRegion(r) {
				return fmt.Errorf("projects[%d] (%s): regions: %q is not an ISO 3166-1 alpha-2 code (two capital letters)", i, p.Name, r)
			}
		}
		names[p.Name], keys[p.APIKey] = true, true
	}
	return nil
}

func validPolicy(name string) bool {
	_, ok := election.ParsePolicy(name)
	return ok
}
