// Package storefront is what the public reads about carriers and models,
// and how carriers get there: applications to carry, profiles and logos
// (reviewed), domain verification, and model proposals.
package storefront

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"strings"
)

// Limits of an uploaded logo.
const (
	MaxLogoBytes = 256 << 10
	MaxLogoSide  = 1024
)

// Logo content types.
const (
	LogoPNG = "image/png"
	LogoSVG = "image/svg+xml"
)

// CheckLogo validates an uploaded logo and returns its content type, or
// what is wrong with it in words for the carrier. A PNG
// is sniffed (not trusted by name or header) and its dimensions read from
// its header before anything is decoded, so a decompression bomb is refused
// unread. An SVG is accepted only if it is plain drawing: no script, no
// event handler, no link out of the document, no entity, no style (which can
// load URLs), nothing outside an allowlist of elements.
func CheckLogo(data []byte) (contentType, problem string) {
	if len(data) == 0 {
		return "", "Choose a PNG or SVG file."
	}
	if len(data) > MaxLogoBytes {
		return "", fmt.Sprintf("The logo is %d KB; keep it under %d KB.", len(data)>>10, MaxLogoBytes>>10)
	}
	if http.DetectContentType(data) == LogoPNG {
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return "", "This PNG cannot be read."
		}
		if cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide || cfg.Width < 16 || cfg.Height < 16 {
			return "", fmt.Sprintf("The logo is %dx%d pixels; use 16 to %d on each side.", cfg.Width, cfg.Height, MaxLogoSide)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			return "", "This PNG is damaged."
		}
		return LogoPNG, ""
	}
	if looksLikeSVG(data) {
		if msg := checkSVG(data); msg != "" {
			return "", msg
		}
		return LogoSVG, ""
	}
	return "", "A logo is a PNG or an SVG file; this is neither."
}

func looksLikeSVG(data []byte) bool {
	head := strings.ToLower(string(data[:min(len(data), 512)]))
	return strings.Contains(head, "<svg")
}

// svgElements are the drawing elements an SVG logo may use.
var svgElements = map[string]bool{
	"svg": true, "g": true, "path": true, "rect": true, "circle": true, "ellipse": true, "line": true, "polyline": true,
	"polygon": true, "text": true, "tspan": true, "defs": true, "lineargradient": true, "radialgradient": true, "stop": true,
	"title": true, "desc": true, "clippath": true, "mask": true, "use": true,
}

func checkSVG(data []byte) string {
	refuse := func(what string) string {
		return fmt.Sprintf("This SVG has %s; a logo may only draw (no scripts, links, styles or embedded content).", what)
	}
	low := strings.ToLower(string(data))
	if strings.Contains(low, "<!entity") || strings.Contains(low, "<!doctype") {
		return refuse("a DOCTYPE or entity")
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	sawSVG := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "This SVG is not well-formed XML."
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if !svgElements[name] {
				return refuse("a <" + t.Name.Local + "> element")
			}
			sawSVG = sawSVG || name == "svg"
			for _, a := range t.Attr {
				key, val := strings.ToLower(a.Name.Local), strings.ToLower(strings.TrimSpace(a.Value))
				switch {
				case strings.HasPrefix(key, "on"):
					return refuse("an event handler (" + a.Name.Local + ")")
				case key == "style":
					return refuse("a style attribute")
				case key == "href" && !strings.HasPrefix(val, "#"):
					return refuse("a link out of the document")
				case key == "base":
					return refuse("an xml:base (it moves where every link points)")
				case strings.ContainsRune(val, '\\'):
					// A CSS escape spells url( without the letters
					// (u\72l(, \75rl(): nothing a logo draws needs one.
					return refuse("a backslash in an attribute (a CSS escape)")
				case strings.Contains(val, "javascript:") || urlOutside(val):
					return refuse("a URL in an attribute")
				}
			}
		case xml.ProcInst:
			if t.Target != "xml" {
				return refuse("a processing instruction")
			}
		case xml.Directive:
			return refuse("a DOCTYPE or entity")
		}
	}
	if !sawSVG {
		return "This file has no <svg> element."
	}
	return ""
}

// urlOutside reports a url(...) in an attribute value that points anywhere
// but into the document: every url( must open a fragment (url(#m)), so
// "url(#m), url(https://...)" is refused for its second one.
func urlOutside(val string) bool {
	for rest := val; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			return false
		}
		rest = strings.TrimLeft(rest[i+len("url("):], " \t\n\r'\"")
		if !strings.HasPrefix(rest, "#") {
			return true
		}
	}
}
