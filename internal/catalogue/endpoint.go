package catalogue

import "time"

// Endpoint is where a listing is served: an OpenAI-compatible base URL and
// the upstream model name. Its API key is never part of it: the store keeps
// the key sealed and hands it out only to the preflight worker and to
// gateway tokens with the credentials scope. KeyHint ("sk-...wxyz") is all
// any page shows.
type Endpoint struct {
	ID            int64
	ListingID     int64
	BaseURL       string
	UpstreamModel string
	KeyHint       string
	CreatedAt     time.Time
}
