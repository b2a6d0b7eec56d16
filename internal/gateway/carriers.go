package gateway

import (
	"net/http"
	"time"

	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/tracing"
)

// CarrierHTTPClient is the client the gateway calls carriers with. Every
// connection goes through guard's dialer: the carrier's host is resolved,
// every address it has is checked, and the checked address is the one
// dialled, so a carrier that passed preflight and later resolves to
// loopback, a private range or the metadata service (169.254.169.254) is
// refused, not reached, and its answers never come back to a caller.
// Redirects are not followed (a carrier answers, it does not send the
// gateway elsewhere). Only the demo and tests, whose carriers run on
// loopback, use a guard with AllowPrivate.
func CarrierHTTPClient(guard *netguard.Guard) *http.Client {
	transport := &http.Transport{
		DialContext:         guard.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return &http.Client{
		Transport: tracing.Transport(transport),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// PortalHTTPClient is the client the gateway reads the catalogue and posts
// its reports with: each call a client span whose traceparent the portal
// continues, so the portal's API spans nest under the gateway's calls
// instead of starting traces of their own.
func PortalHTTPClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: tracing.Transport(http.DefaultTransport)}
}
