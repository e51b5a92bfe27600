package backend

import (
	"regexp"
	"strings"
)

// transportWords is what gRPC puts before a plugin's own error message.
var transportWords = regexp.MustCompile(`rpc error: code = \w+ desc = `)

// ErrorText is an error as users read it: the plugin's own words, without
// the transport's "rpc error: code = Unknown desc =" prefix (wherever a
// wrapper put it), trimmed.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(transportWords.ReplaceAllString(err.Error(), ""))
}
