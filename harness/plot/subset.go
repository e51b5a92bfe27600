package plot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/image/font/sfnt"
)

// The charts' font is carried by every report page (as a data URL) and
// beside its SVGs; whole, Liberation Sans is 412 KB, most of it outlines of
// scripts no chart writes. subsetTTF keeps the outlines of the runes the
// charts use (fontRunes) and empties the others' entries. Glyph indices,
// advance widths and kerning (hmtx, GPOS, kern) stay as they are, so a
// browser lays the text out with exactly the widths gonum measured.

// fontRunes are the runes whose outlines the subset keeps: ASCII,
// Latin-1, Greek letters, punctuation (dashes, quotes, …, ‰), super- and
// subscripts, arrows and the common mathematical signs (≤, ≥, ≈, −, Σ, √,
// ∞). A rune outside them is drawn in a fallback font, which the layout
// test reports as text of the wrong width.
var fontRunes = func() []rune {
	var rs []rune
	for _, span := range [][2]rune{{0x20, 0x7e}, {0xa0, 0xff}, {0x391, 0x3c9}, {0x2010, 0x2044}, {0x2070, 0x209f},
		{0x2190, 0x2195}} {
		for r := span[0]; r <= span[1]; r++ {
			rs = append(rs, r)
		}
	}
	return append(rs, '∂', '∆', '∏', '∑', '−', '√', '∞', '≈', '≠', '≤', '≥')
}()

var errSubset = errors.New("plot: font subset")

// subsetTTF returns the TrueType font raw with only the outlines of runes
// (and the glyphs their composites use, and .notdef) kept.
func subsetTTF(raw []byte, runes []rune) ([]byte, error) {
	f, err := sfnt.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: parse: %v", errSubset, err)
	}
	tables, err := tableDirectory(raw)
	if err != nil {
		return nil, err
	}
	head, maxp, loca, glyf := tables["head"], tables["maxp"], tables["loca"], tables["glyf"]
	if head == nil || maxp == nil || loca == nil || glyf == nil || len(head) < 54 || len(maxp) < 6 {
		return nil, fmt.Errorf("%w: not a TrueType-outline font", errSubset)
	}
	n := int(binary.BigEndian.Uint16(maxp[4:]))
	longLoca := binary.BigEndian.Uint16(head[50:]) == 1
	offsets := make([]int, n+1)
	for i := range offsets {
		switch {
		case longLoca && 4*i+4 <= len(loca):
			offsets[i] = int(binary.BigEndian.Uint32(loca[4*i:]))
		case !longLoca && 2*i+2 <= len(loca):
			offsets[i] = 2 * int(binary.BigEndian.Uint16(loca[2*i:]))
		default:
			return nil, fmt.Errorf("%w: loca holds fewer than %d glyphs", errSubset, n)
		}
	}
	glyph := func(i int) []byte {
		if i < 0 || i >= n || offsets[i] > offsets[i+1] || offsets[i+1] > len(glyf) {
			return nil
		}
		return glyf[offsets[i]:offsets[i+1]]
	}
	keep := map[int]bool{0: true}
	var todo []int
	var buf sfnt.Buffer
	for _, r := range runes {
		if gi, err := f.GlyphIndex(&buf, r); err == nil && gi != 0 && !keep[int(gi)] {
			keep[int(gi)] = true
			todo = append(todo, int(gi))
		}
	}
	for len(todo) > 0 { // composites name their components
		g := glyph(todo[len(todo)-1])
		todo = todo[:len(todo)-1]
		for _, c := range components(g) {
			if !keep[c] {
				keep[c] = true
				todo = append(todo, c)
			}
		}
	}
	var newGlyf, newLoca []byte
	for i := range n {
		newLoca = binary.BigEndian.AppendUint32(newLoca, uint32(len(newGlyf)))
		if keep[i] {
			newGlyf = append(newGlyf, glyph(i)...)
			for len(newGlyf)%4 != 0 {
				newGlyf = append(newGlyf, 0)
			}
		}
	}
	newLoca = binary.BigEndian.AppendUint32(newLoca, uint32(len(newGlyf)))
	newHead := slices.Clone(head)
	binary.BigEndian.PutUint16(newHead[50:], 1) // long loca offsets
	binary.BigEndian.PutUint32(newHead[8:], 0)  // checkSumAdjustment, set below
	tables["head"], tables["glyf"], tables["loca"] = newHead, newGlyf, newLoca
	if post := tables["post"]; len(post) >= 32 {
		// Format 3: no glyph names (27 KB of them).
		p := slices.Clone(post[:32])
		binary.BigEndian.PutUint32(p, 0x00030000)
		tables["post"] = p
	}
	delete(tables, "FFTM") // FontForge's timestamps
	// No substitutions: gonum lays text out glyph by glyph, and a browser
	// applying the font's ligatures (fi) would draw glyphs the subset
	// emptied, at other widths.
	delete(tables, "GSUB")
	out := writeFont(raw[:4], tables)
	adj := 0xB1B0AFBA - checksum(out)
	for off := 12; off+16 <= len(out); off += 16 { // head's checkSumAdjustment
		if string(out[off:off+4]) == "head" {
			binary.BigEndian.PutUint32(out[binary.BigEndian.Uint32(out[off+8:])+8:], adj)
		}
	}
	return out, nil
}

// tableDirectory maps each table's tag to its bytes.
func tableDirectory(raw []byte) (map[string][]byte, error) {
	if len(raw) < 12 {
		return nil, fmt.Errorf("%w: %d bytes", errSubset, len(raw))
	}
	count := int(binary.BigEndian.Uint16(raw[4:]))
	tables := map[string][]byte{}
	for i := range count {
		rec := 12 + 16*i
		if rec+16 > len(raw) {
			return nil, fmt.Errorf("%w: table directory cut short", errSubset)
		}
		off, n := int(binary.BigEndian.Uint32(raw[rec+8:])), int(binary.BigEndian.Uint32(raw[rec+12:]))
		if off+n > len(raw) {
			return nil, fmt.Errorf("%w: table %q past the end", errSubset, raw[rec:rec+4])
		}
		tables[string(raw[rec:rec+4])] = raw[off : off+n]
	}
	return tables, nil
}

// components are the glyph indices a composite glyph g draws (none for a
// simple glyph).
func components(g []byte) []int {
	if len(g) < 10 || int16(binary.BigEndian.Uint16(g)) >= 0 {
		return nil
	}
	const (
		argWords, haveScale, moreComponents, xyScale, twoByTwo = 0x0001, 0x0008, 0x0020, 0x0040, 0x0080
	)
	var out []int
	for p := 10; p+4 <= len(g); {
		flags := binary.BigEndian.Uint16(g[p:])
		out = append(out, int(binary.BigEndian.Uint16(g[p+2:])))
		p += 4
		if flags&argWords != 0 {
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&haveScale != 0:
			p += 2
		case flags&xyScale != 0:
			p += 4
		case flags&twoByTwo != 0:
			p += 8
		}
		if flags&moreComponents == 0 {
			break
		}
	}
	return out
}

// writeFont lays out an sfnt file of tables, sorted by tag, each 4-byte
// aligned, with its directory's checksums.
func writeFont(version []byte, tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	n := len(tags)
	pow, log := 1, 0
	for pow*2 <= n {
		pow, log = pow*2, log+1
	}
	out := append([]byte(nil), version...)
	out = binary.BigEndian.AppendUint16(out, uint16(n))
	out = binary.BigEndian.AppendUint16(out, uint16(16*pow))
	out = binary.BigEndian.AppendUint16(out, uint16(log))
	out = binary.BigEndian.AppendUint16(out, uint16(16*n-16*pow))
	off := 12 + 16*n
	for _, t := range tags {
		data := tables[t]
		out = append(out, t...)
		out = binary.BigEndian.AppendUint32(out, checksum(data))
		out = binary.BigEndian.AppendUint32(out, uint32(off))
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		off += (len(data) + 3) &^ 3
	}
	for _, t := range tags {
		out = append(out, tables[t]...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// checksum is the sfnt sum of b as big-endian uint32s, zero-padded.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}
