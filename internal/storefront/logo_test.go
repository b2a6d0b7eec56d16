package storefront

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func pngOf(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// bombPNG is a valid PNG header claiming 100000x100000 pixels: decoding it
// would allocate 40 GB.
func bombPNG() []byte {
	var b bytes.Buffer
	b.Write([]byte("\x89PNG\r\n\x1a\n"))
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100000)
	binary.BigEndian.PutUint32(ihdr[4:], 100000)
	ihdr[8], ihdr[9] = 8, 6
	chunk := func(kind string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(kind)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b.Bytes()
}

func TestLogos(t *testing.T) {
	good := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><title>Nebula</title><circle cx="32" cy="32" r="30" fill="#1f5fbf"/><use href="#a"/></svg>`
	cases := []struct {
		name     string
		data     []byte
		wantType string
		wantErr  string
	}{
		{"a PNG", pngOf(64, 64), LogoPNG, ""},
		{"an SVG", []byte(good), LogoSVG, ""},
		{"a PNG that is HTML", []byte("<html><script>alert(1)</script></html>"), "", "neither"},
		{"a 50 MB image", bytes.Repeat([]byte{0x89}, 50<<20), "", "keep it under"},
		{"a huge PNG", pngOf(2000, 20), "", "pixels"},
		{"a decompression bomb", bombPNG(), "", "pixels"},
		{"an SVG with a script", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "", "<script>"},
		{"an SVG with a handler", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "", "event handler"},
		{"an SVG linking out", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><use href="https://evil.example/x.svg#a"/></svg>`), "", "link out"},
		{"an SVG with an entity", []byte(`<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>`), "", "entity"},
		{"an SVG with foreignObject", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div/></foreignObject></svg>`), "", "foreignObject"},
		{"an SVG with a style", []byte(`<svg xmlns="http://www.w3.org/2000/svg" style="background:url(https://x)"/>`), "", "style"},
		// F6: every url( must point into the document, and nothing may move
		// where the links point.
		{"an SVG with a second url out", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect mask="url(#m), url(https://evil.example/x)"/></svg>`), "", "URL in an attribute"},
		{"an SVG with a quoted url out", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url( 'https://evil.example/x')"/></svg>`), "", "URL in an attribute"},
		{"an SVG with xml:base", []byte(`<svg xmlns="http://www.w3.org/2000/svg" xml:base="https://evil.example/"><use href="#a"/></svg>`), "", "xml:base"},
		// Third probe: a CSS escape spells url( without its letters.
		{"an SVG with an escaped url", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect fill="u\72l(https://evil.example/x)"/></svg>`), "", "backslash"},
		{"an SVG with another escape", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect mask="\75 rl(https://evil.example/x)"/></svg>`), "", "backslash"},
		{"empty", nil, "", "Choose"},
	}
	for _, tc := range cases {
		typ, problem := CheckLogo(tc.data)
		switch {
		case tc.wantErr == "" && (problem != "" || typ != tc.wantType):
			t.Errorf("%s: %q, %q", tc.name, typ, problem)
		case tc.wantErr != "" && !strings.Contains(problem, tc.wantErr):
			t.Errorf("%s: %q, want a problem saying %q", tc.name, problem, tc.wantErr)
		}
	}
}
