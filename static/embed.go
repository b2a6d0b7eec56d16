// Package static embeds the portal's CSS, scripts and images: nothing is
// loaded from outside the portal.
package static

import "embed"

// FS holds css/ and js/.
//
//go:embed css js
var FS embed.FS
