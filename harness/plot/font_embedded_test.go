package plot

import (
	"regexp"
	"strings"
	"testing"
)

// The block replaceEmbedded cuts, as the regular expression it replaced
// (kept here as its specification).
var embeddedSpec = regexp.MustCompile(`(?s)<defs>\s*<style>.*?</style>\s*</defs>\n?`)

func TestReplaceEmbeddedMatchesItsRegexp(t *testing.T) {
	font := strings.Repeat("AAAA", 1000)
	cases := map[string]string{
		"vgsvg's block":            "<svg><defs>\n<style>@font-face{src:url(" + font + ")}</style>\n</defs>\n<g/></svg>",
		"no newline after":         "<svg><defs><style>x</style></defs><g/></svg>",
		"tabs and CRs":             "<defs>\t\r\n <style>x</style> \f</defs>rest",
		"first </style> not last":  "<defs><style>a</style>b</style>\n</defs>\nrest",
		"two blocks":               "<defs><style>a</style></defs>mid<defs> <style>b</style> </defs>\nend",
		"defs without style":       "<defs><linearGradient/></defs><defs><style>x</style></defs>",
		"unterminated style":       "<defs><style>never closed",
		"style closed, defs not":   "<defs><style>x</style> <g/>",
		"nothing to replace":       "<svg><g/></svg>",
		"nested defs before style": "<defs><defs><style>x</style></defs>",
	}
	for name, in := range cases {
		for _, repl := range []string{"", "<defs><style>@font-face{src:url(f.ttf)}</style></defs>\n"} {
			want := embeddedSpec.ReplaceAllLiteralString(in, repl)
			if got := replaceEmbedded(in, repl); got != want {
				t.Errorf("%s, repl %q:\n got %q\nwant %q", name, repl, got, want)
			}
		}
	}
}
