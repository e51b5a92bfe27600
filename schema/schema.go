// Package schema carries the committed JSON Schema of an xbench result, so
// the binary validates against exactly the file users read.
package schema

import _ "embed"

// ResultJSON is schema/result.schema.json, generated from harness/result.
//
//go:embed result.schema.json
var ResultJSON []byte

// ResultV1JSON is the schema of results written before the workload axis
// (schema_version 1, TTT only); such results still load, upgraded.
//
//go:embed result.v1.schema.json
var ResultV1JSON []byte
