// Package carrierclient builds the official OpenAI Go client for calls
// Airside makes to an OpenAI-compatible server it does not run: a carrier
// (the reference gateway, preflight) or a gateway (the traffic driver).
//
// openai.NewClient starts from options read from the process environment
// (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID,
// OPENAI_CUSTOM_HEADERS, ...), so an operator's own OpenAI settings would
// reach every carrier: organisation and project ids, and custom headers that
// often hold credentials. New never reads the environment: a call carries the
// base URL, the key and the HTTP client it is given, and nothing else.
package carrierclient

import (
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// New returns a client for the server at baseURL with key as its bearer
// token, sending through hc (nil: a plain client), with no retries (a caller that retries decides
// where to), and with extra options after those. Only the services Airside
// calls are set: Chat and Models, and the raw Post/Get/Execute.
func New(baseURL, key string, hc *http.Client, extra ...option.RequestOption) openai.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	opts := append([]option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(baseURL, "/") + "/"),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}, extra...)
	// Not openai.NewClient: it prepends openai.DefaultClientOptions, which
	// read the environment (see the package comment).
	return openai.Client{
		Options: opts,
		Chat:    openai.NewChatService(opts...),
		Models:  openai.NewModelService(opts...),
	}
}
