package workload

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is a parameter's type.
type Kind string

const (
	Int  Kind = "int"
	Enum Kind = "enum"
	Bool Kind = "bool"
	// String is free text (a folder path): no control characters, at most
	// MaxLen bytes, so a value stays printable and fits a file name.
	String Kind = "string"
)

// Param declares one parameter. Its key in result.Config.Params is Name
// ("seq_len"); its flag is Flag() ("--seq-len").
type Param struct {
	Name    string
	Kind    Kind
	Default string
	Help    string
	// Allowed lists an Enum's values; Aliases maps other accepted spellings
	// to one of them ("1.3b" -> "1b").
	Allowed []string
	Aliases map[string]string
	// Min and Max bound an Int (inclusive); Max 0 means 1<<40, a bound every
	// parameter needs so derived numbers cannot overflow.
	Min, Max int64
	// MaxLen bounds a String's length in bytes; 0 means DefaultMaxLen.
	MaxLen int
	// SizeAxis marks a parameter along which memory and time grow (a larger
	// Int, or a later value of an Enum whose Allowed is in increasing size):
	// a progressive sweep that ran out of memory at one value skips the
	// larger ones. Parameters that are not size axes must match exactly.
	SizeAxis bool
	// Scale marks a parameter that changes only how much is computed, not
	// what (model size, sequence length, a GEMM's m, n, k): a verification
	// at one value stands for the others. Every other parameter (inner
	// model, layout, dtype) must match for a verdict to carry over.
	Scale bool
	// Length marks a Scale parameter along which the work accumulates (a
	// sequence length, a GEMM's k): rounding error and the number of tiles
	// a kernel walks grow with it, so a verification at one value stands
	// only for values of its length class, within LengthClassFactor of it
	// (a verify at T=20 says nothing about T=4096).
	Length bool
}

// LengthClassFactor bounds how far apart two values of a Length parameter
// may be for a verification at one to cover the other.
const LengthClassFactor = 16

// SameLengthClass says whether a and b, values of a Length parameter, are
// within LengthClassFactor of each other. Values that are not positive
// integers (0 standing for another parameter) must be equal.
func SameLengthClass(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA != nil || errB != nil || x <= 0 || y <= 0 {
		return a == b
	}
	return max(x, y) <= LengthClassFactor*min(x, y)
}

// DefaultMax bounds an Int parameter whose declaration names no Max.
const DefaultMax = int64(1) << 40

// DefaultMaxLen bounds a String parameter whose declaration names no MaxLen.
const DefaultMaxLen = 256

// Flag is the command-line flag of the parameter.
func (p Param) Flag() string { return "--" + strings.ReplaceAll(p.Name, "_", "-") }

// FlagName is Flag without the dashes, as pflag wants it.
func (p Param) FlagName() string { return strings.ReplaceAll(p.Name, "_", "-") }

// Upper is the effective Max.
func (p Param) Upper() int64 {
	if p.Max == 0 {
		return DefaultMax
	}
	return p.Max
}

// MaxBytes is the effective MaxLen of a String.
func (p Param) MaxBytes() int {
	if p.MaxLen <= 0 {
		return DefaultMaxLen
	}
	return p.MaxLen
}

// AllowedText says what values are allowed, for help and errors.
func (p Param) AllowedText() string {
	switch p.Kind {
	case Enum:
		return strings.Join(p.Allowed, ", ")
	case Bool:
		return "true, false"
	case String:
		return fmt.Sprintf("non-empty text of at most %d bytes without control characters", p.MaxBytes())
	default:
		return fmt.Sprintf("integers %d to %d", p.Min, p.Upper())
	}
}

// Canonical checks one value and returns its canonical spelling; the error
// names the flag, the value (cut to 80 characters) and what is allowed.
func (p Param) Canonical(v string) (string, error) {
	bad := func() error {
		return &ValueError{Flag: p.Flag(), Value: v, Allowed: p.AllowedText()}
	}
	switch p.Kind {
	case Enum:
		if a, ok := p.Aliases[v]; ok {
			v = a
		}
		if !slices.Contains(p.Allowed, v) {
			return "", bad()
		}
		return v, nil
	case Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", bad()
		}
		return strconv.FormatBool(b), nil
	case String:
		if v == "" || len(v) > p.MaxBytes() || strings.ContainsFunc(v, unicode.IsControl) || !utf8.ValidString(v) {
			return "", bad()
		}
		return v, nil
	default:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < p.Min || n > p.Upper() {
			return "", bad()
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// ValueError is a bad value for a flag: exit 2 at the CLI.
type ValueError struct {
	Flag, Value, Allowed string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s %q is not allowed (allowed: %s)", e.Flag, Cut(e.Value, 80), e.Allowed)
}

// Cut shortens s to n bytes plus an ellipsis, so hostile input is never
// echoed whole.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CheckError is a configuration that breaks a rule between parameters
// (Workload.Check): bad input, exit 2 at the CLI like a ValueError.
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// IsInputError says whether err is bad input from the user.
func IsInputError(err error) bool {
	var v *ValueError
	var c *CheckError
	return errors.As(err, &v) || errors.As(err, &c)
}
