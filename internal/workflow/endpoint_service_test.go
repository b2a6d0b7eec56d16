package workflow

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/secret"
)

// fakeEndpoints keeps one listing's endpoints in memory.
type fakeEndpoints struct {
	*fakeStore
	latest     *catalogue.Endpoint
	latestKey  string
	registered []NewEndpoint
	gaps       []time.Duration
	results    map[string]preflight.Result
}

func (f *fakeEndpoints) LatestEndpoint(context.Context, int64) (*catalogue.Endpoint, string, error) {
	return f.latest, f.latestKey, nil
}
func (f *fakeEndpoints) RegisterEndpoint(_ context.Context, _ int64, ep NewEndpoint) (int64, error) {
	f.registered = append(f.registered, ep)
	return int64(len(f.registered)), nil
}
func (f *fakeEndpoints) RequestPreflight(_ context.Context, _, _ int64, gap time.Duration) (int64, error) {
	f.gaps = append(f.gaps, gap)
	return 41, nil
}
func (f *fakeEndpoints) FindPreflightRuns(context.Context, int64, int64) (*preflight.Run, map[string]preflight.Result, error) {
	return &preflight.Run{ID: 41}, f.results, nil
}
func (f *fakeEndpoints) PublishedKey(context.Context, int64, int64) (*catalogue.Endpoint, string, error) {
	return f.latest, f.latestKey, nil
}

// refuseLoopback is an outbound rule that refuses one address.
type refuseLoopback struct{}

func (refuseLoopback) CheckURL(raw string) (*url.URL, error) {
	if strings.Contains(raw, "127.0.0.1") {
		return nil, errors.New("netguard: the address is loopback")
	}
	return url.Parse(raw)
}

func newEndpoints(t *testing.T) (*Endpoints, *fakeEndpoints, *int) {
	t.Helper()
	box, err := secret.New(make([]byte, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	st := &fakeEndpoints{fakeStore: newFakeStore()}
	queued := 0
	return &Endpoints{Store: st, Secrets: box, Outbound: refuseLoopback{}, Queued: func() { queued++ }}, st, &queued
}

func TestRegisterEndpoint(t *testing.T) {
	ctx := context.Background()
	good := EndpointForm{BaseURL: "https://api.nebula.example/v1/", UpstreamModel: "kimi-k2", APIKey: "sk-0123456789abcdef"}
	for _, tc := range []struct {
		name  string
		edit  func(*EndpointForm)
		field string
	}{
		{"no URL", func(f *EndpointForm) { f.BaseURL = " " }, "base_url"},
		{"a long URL", func(f *EndpointForm) { f.BaseURL = "https://x.example/" + strings.Repeat("a", MaxBaseURL) }, "base_url"},
		{"a loopback URL", func(f *EndpointForm) { f.BaseURL = "http://127.0.0.1:9/v1" }, "base_url"},
		{"no model", func(f *EndpointForm) { f.UpstreamModel = "" }, "upstream_model"},
		{"a model with spaces", func(f *EndpointForm) { f.UpstreamModel = "kimi k2" }, "upstream_model"},
		{"no key for a first endpoint", func(f *EndpointForm) { f.APIKey = "" }, "api_key"},
		{"a short key", func(f *EndpointForm) { f.APIKey = "sk-1" }, "api_key"},
		{"a key with spaces", func(f *EndpointForm) { f.APIKey = "sk-0123 456789abcdef" }, "api_key"},
		{"a control character in the note", func(f *EndpointForm) { f.Justification = "a\x00b" }, "justification"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, st, queued := newEndpoints(t)
			form := good
			tc.edit(&form)
			_, err := e.Register(ctx, adminA, 10, form)
			if msg := apperr.FieldErrors(err)[tc.field]; msg == "" {
				t.Fatalf("no message on %s: %v", tc.field, err)
			}
			if len(st.registered) != 0 || *queued != 0 {
				t.Error("a refused endpoint was registered")
			}
		})
	}

	e, st, queued := newEndpoints(t)
	if _, err := e.Register(ctx, memberA, 10, good); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("a member registered an endpoint: %v", err)
	}
	if _, err := e.Register(ctx, memberB, 10, good); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("another carrier's member saw the listing: %v", err)
	}
	if _, err := e.Register(ctx, adminA, 12, good); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("registered on a delisted listing: %v", err)
	}
	if _, err := e.Register(ctx, adminA, 10, good); err != nil {
		t.Fatal(err)
	}
	ep := st.registered[0]
	if ep.BaseURL != "https://api.nebula.example/v1" || *queued != 1 || ep.KeyHint != secret.Hint(good.APIKey) || strings.Contains(ep.KeyHint, "456789") {
		t.Errorf("registered %+v (queued %d)", ep, *queued)
	}
	if strings.Contains(ep.KeySealed, good.APIKey) {
		t.Fatal("the key was stored in clear")
	}
	if plain, err := e.OpenKey(ep.KeySealed, 10); err != nil || plain != good.APIKey {
		t.Errorf("the sealed key opens to %q, %v", plain, err)
	}
	if _, err := e.OpenKey(ep.KeySealed, 20); err == nil {
		t.Error("a key sealed for listing 10 opened for listing 20")
	}

	// The same endpoint again, without a new key, changes nothing: refused.
	st.latest = &catalogue.Endpoint{ID: 1, BaseURL: ep.BaseURL, UpstreamModel: ep.UpstreamModel, KeyHint: ep.KeyHint}
	st.latestKey = ep.KeySealed
	same := good
	same.APIKey = ""
	if _, err := e.Register(ctx, adminA, 10, same); apperr.FieldErrors(err)["base_url"] == "" {
		t.Errorf("the registered endpoint was filed again: %v", err)
	}
	same.UpstreamModel = "kimi-k2.5"
	if _, err := e.Register(ctx, adminA, 10, same); err != nil || st.registered[1].KeySealed != ep.KeySealed || st.registered[1].KeyHint != ep.KeyHint {
		t.Errorf("a new model keeping the key: %v %+v", err, st.registered)
	}
}

func TestRunPreflightAndCredentials(t *testing.T) {
	ctx := context.Background()
	e, st, queued := newEndpoints(t)
	if _, err := e.RunPreflight(ctx, memberB, 10); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("another carrier ran preflight: %v", err)
	}
	for _, p := range []struct {
		name string
		gap  time.Duration
	}{{"default gap", time.Minute}, {"set gap", 5 * time.Minute}} {
		e.MinGap = p.gap
		if p.name == "default gap" {
			e.MinGap = 0
		}
		if id, err := e.RunPreflight(ctx, memberA, 10); err != nil || id != 41 {
			t.Fatalf("%s: %d %v", p.name, id, err)
		}
		if got := st.gaps[len(st.gaps)-1]; got != p.gap {
			t.Errorf("%s: gap %v, want %v", p.name, got, p.gap)
		}
	}
	if _, err := e.RunPreflight(ctx, reviewer, 20); err != nil || *queued != 3 {
		t.Errorf("a reviewer runs preflight on any listing: %v (queued %d)", err, *queued)
	}

	if _, _, err := e.Credentials(ctx, 1, 10); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("credentials without an endpoint: %v", err)
	}
	sealed, _ := e.Secrets.Seal("sk-live-key-000", KeyBinding(10))
	st.latest, st.latestKey = &catalogue.Endpoint{ID: 3}, sealed
	if ep, key, err := e.Credentials(ctx, 1, 10); err != nil || ep.ID != 3 || key != "sk-live-key-000" {
		t.Errorf("credentials: %v %q %v", ep, key, err)
	}
	if ep, run, _, err := e.Preflight(ctx, 10); err != nil || ep.ID != 3 || run.ID != 41 {
		t.Errorf("preflight page: %v %v %v", ep, run, err)
	}

	// A rotation: a key sealed under the old secret is sealed again under
	// the new one, and one sealed under the new one is left alone.
	newer, err := secret.New([]byte(strings.Repeat("k", secret.KeySize)), make([]byte, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	e.Secrets = newer
	again, changed, err := e.Reseal(sealed, 10)
	if err != nil || !changed || secret.SealedWith(again) != newer.Primary() {
		t.Fatalf("reseal: %v %v", changed, err)
	}
	if _, changed, _ := e.Reseal(again, 10); changed {
		t.Error("resealed a key already under the primary secret")
	}
}
