package templates

import (
	"fmt"

	"github.com/airside/airside/internal/alerting"
)

// rotateOverlap says how long a replaced webhook secret keeps signing,
// from the constant the sender obeys.
var rotateOverlap = fmt.Sprintf("%d hours", int(alerting.RotationOverlap.Hours()))

// rotateHint is the rotate button's explanation.
var rotateHint = "A new secret, shown once; the current one keeps signing beside it for " + rotateOverlap + "."
