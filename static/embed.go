// Package static embeds the portal's CSS, scripts and images: nothing is
// loaded from outside the portal.
package static

import "embed"

// FS holds css/ (and, later, js/ and img/).
//
//go:embed css
var FS embed.FS
