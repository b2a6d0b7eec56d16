package templates

import (
	"strconv"
	"strings"
)

func itoa(v int) string { return strconv.Itoa(v) }

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

func joinComma(items []string) string { return strings.Join(items, ", ") }
