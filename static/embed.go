// Package static embeds the portal's CSS, scripts and images: nothing is
// loaded from outside the portal.
package static

import "embed"

// FS holds css/, js/ and img/.
//
//go:embed css js img
var FS embed.FS
