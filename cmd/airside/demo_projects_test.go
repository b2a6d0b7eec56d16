package main

import (
	"encoding/json"
	"testing"

	"github.com/airside/airside/internal/gateway"
)

// TestTheDemoProjectsReadAsTheGatewayReadsThem: the demo's project config,
// written as cmdDemo writes it for the gateway process, reads back through
// the gateway's strict parser with the EU project's residency and
// preference intact, and one project on the share policy.
func TestTheDemoProjectsReadAsTheGatewayReadsThem(t *testing.T) {
	data, err := json.MarshalIndent(demoProjects, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gateway.ParseConfig(data)
	if err != nil {
		t.Fatalf("the gateway refuses the demo's config: %v\n%s", err, data)
	}
	var eu *gateway.Project
	shared := 0
	for i := range cfg.Projects {
		if cfg.Projects[i].Name == "eu-health" {
			eu = &cfg.Projects[i]
		}
		if cfg.Projects[i].Policy == "share" {
			shared++
		}
	}
	if shared != 1 {
		t.Errorf("%d demo projects on the share policy, want one (the demo shows the trade-off)", shared)
	}
	if eu == nil || len(eu.Regions) != 2 || eu.Provider == nil || eu.Provider.DataCollection == nil || *eu.Provider.DataCollection != "deny" {
		t.Errorf("the EU project read as %+v", eu)
	}
}
