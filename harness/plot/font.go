package plot

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// The charts are laid out with the metrics of gplot.DefaultFont (Liberation
// Sans from codeberg.org/go-fonts/liberation). A viewer that draws them in
// another font gets other text widths, and labels run into each other, so
// every SVG carries that font as an @font-face (vgsvg.EmbedFonts) and the
// HTML page carries it once for all its inline charts (FontFaceCSS).

// FontFamily is the family name the SVGs use and the @font-face declares.
const FontFamily = "Liberation Sans"

// svgFallback names metric-compatible fonts after the embedded one, for
// SVG viewers that ignore @font-face.
const svgFallback = "font-family:'" + FontFamily + "',Arial,Helvetica,sans-serif;"

var fontTTF = sync.OnceValues(func() ([]byte, error) {
	face := font.DefaultCache.Lookup(gplot.DefaultFont, vg.Points(10))
	if face.Face == nil {
		return nil, fmt.Errorf("plot: font %s is not in gonum's font cache", gplot.DefaultFont.Name())
	}
	var raw bytes.Buffer
	if _, err := face.Face.WriteSourceTo(nil, &raw); err != nil {
		return nil, fmt.Errorf("plot: read font %s: %w", gplot.DefaultFont.Name(), err)
	}
	return subsetTTF(raw.Bytes(), fontRunes)
})

var fontCSS = sync.OnceValues(func() (string, error) {
	raw, err := fontTTF()
	if err != nil {
		return "", err
	}
	return fontFace("data:font/ttf;base64," + base64.StdEncoding.EncodeToString(raw)), nil
})

func fontFace(url string) string {
	return fmt.Sprintf("@font-face{font-family:%q;font-weight:normal;font-style:normal;src:url(%s) format(\"truetype\");}", FontFamily, url)
}

// FontTTF is the charts' font file, for a folder of SVGs that link it
// (LinkFont) instead of each embedding it.
func FontTTF() ([]byte, error) { return fontTTF() }

// LinkFont replaces the font an SVG embeds (about 550 KB, in every file)
// with an @font-face that loads url, a FontTTF written once beside the
// SVGs: a report's dozen charts then carry the font once.
func LinkFont(svg []byte, url string) []byte {
	style := "<defs><style>" + fontFace(url) + "</style></defs>\n"
	return []byte(replaceEmbedded(string(svg), style))
}

// FontFaceCSS is the @font-face rule of the charts' font as a data URL,
// for a page that inlines SVGs made by InlineSVG.
func FontFaceCSS() (string, error) { return fontCSS() }

// TextWidth is the width in points at which the charts lay out s in their
// font at size points: what a viewer must reproduce for labels to fit.
func TextWidth(s string, size float64) float64 {
	face := font.DefaultCache.Lookup(gplot.DefaultFont, vg.Points(size))
	return face.Width(s).Points()
}

// svgFonts adds fallbacks to the font family vgsvg names in text styles.
func svgFonts(svg []byte) []byte {
	return []byte(strings.ReplaceAll(string(svg), "font-family:"+FontFamily+";", svgFallback))
}

// replaceEmbedded replaces every <defs><style> block vgsvg writes with the
// @font-face (<defs>, white space, <style>, anything up to the first
// </style> followed by white space and </defs>, one optional newline) with
// repl. A scan, not a regular expression: the block holds the whole
// embedded font, and regexp's lazy match over it was a third of the report
// tests' CPU (docs/results/ci-time.md).
func replaceEmbedded(s, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "<defs>")
		if i < 0 {
			break
		}
		n, ok := embeddedLen(s[i:])
		if !ok {
			b.WriteString(s[:i+len("<defs>")])
			s = s[i+len("<defs>"):]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s = s[i+n:]
	}
	b.WriteString(s)
	return b.String()
}

// embeddedLen is the length of the block replaceEmbedded replaces at the
// start of s, which begins with <defs>; ok is false when none starts there.
func embeddedLen(s string) (n int, ok bool) {
	j := len("<defs>")
	j += spaceLen(s[j:])
	if !strings.HasPrefix(s[j:], "<style>") {
		return 0, false
	}
	j += len("<style>")
	for {
		k := strings.Index(s[j:], "</style>")
		if k < 0 {
			return 0, false
		}
		j += k + len("</style>")
		e := j + spaceLen(s[j:])
		if strings.HasPrefix(s[e:], "</defs>") {
			e += len("</defs>")
			if strings.HasPrefix(s[e:], "\n") {
				e++
			}
			return e, true
		}
	}
}

// spaceLen is the length of the white space (RE2's \s) s starts with.
func spaceLen(s string) int {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\f\r", s[i]) >= 0 {
		i++
	}
	return i
}

// InlineSVG strips the XML prolog and the embedded font so the SVG can
// sit inside an HTML page that declares FontFaceCSS once.
func InlineSVG(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return replaceEmbedded(s, "")
}

var fontSize = regexp.MustCompile(`font-size:([0-9.]+)px`)

// SmallestText is the smallest font size (in the SVG's user units,
// points) svg sets text in, 9 when it sets none.
func SmallestText(svg []byte) float64 {
	smallest := math.Inf(1)
	for _, m := range fontSize.FindAllSubmatch(svg, -1) {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil && v > 0 {
			smallest = math.Min(smallest, v)
		}
	}
	if math.IsInf(smallest, 1) {
		return 9
	}
	return smallest
}
