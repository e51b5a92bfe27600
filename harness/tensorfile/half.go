package tensorfile

import "math"

// float32ToBF16 keeps the top 16 bits of a float32, rounding to nearest even;
// NaN stays a (quiet) NaN instead of rounding into infinity.
func float32ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if x != x {
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// float32ToF16 converts to IEEE binary16, rounding to nearest even, with
// subnormals, overflow to infinity and NaN handled.
func float32ToF16(x float32) uint16 {
	bits := math.Float32bits(x)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23) & 0xff
	mant := bits & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // the binary16 biased exponent
	if e >= 31 {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half: value = h * 2^-24, with h = m * 2^(e-14).
		m := mant | 0x800000
		shift := uint(14 - e)
		if exp == 0 || shift > 24 {
			return sign
		}
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is the correct rounding, up to infinity
	}
	return sign | uint16(h)
}

// f16ToFloat32 widens IEEE binary16 exactly.
func f16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}

// The conversions every Go component uses for half-precision values (the
// native backend's kernels and its GEMM included): one definition.

// BF16Bits is x rounded to bfloat16 (nearest even), as its bits.
func BF16Bits(x float32) uint16 { return float32ToBF16(x) }

// FromBF16Bits widens a bfloat16 exactly.
func FromBF16Bits(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 is x rounded to the nearest bfloat16 (ties to even).
func RoundBF16(x float32) float32 { return FromBF16Bits(BF16Bits(x)) }

// F16Bits is x rounded to IEEE binary16 (nearest even), as its bits.
func F16Bits(x float32) uint16 { return float32ToF16(x) }

// FromF16Bits widens an IEEE binary16 exactly.
func FromF16Bits(h uint16) float32 { return f16ToFloat32(h) }

// RoundF16 is x rounded to the nearest binary16 (ties to even).
func RoundF16(x float32) float32 { return FromF16Bits(F16Bits(x)) }
