// Package schema carries the committed JSON Schema of an xbench result, so
// the binary validates against exactly the file users read.
package schema

import _ "embed"

// ResultJSON is schema/result.schema.json, generated from harness/result.
//
//go:embed result.schema.json
var ResultJSON []byte
