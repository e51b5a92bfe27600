//go:generate go run ../cmd/genschema ../../schema/result.schema.json

package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/xbench/xbench/schema"
)

// GenerateSchema reflects the JSON Schema of Result from the Go types. The
// committed schema/result.schema.json must equal its output (a test checks).
func GenerateSchema() ([]byte, error) {
	r := &jsonschema.Reflector{DoNotReference: true}
	s := r.Reflect(&Result{})
	s.ID = "https://xbench.dev/schema/result.schema.json"
	s.Title = "xbench result"
	s.Description = fmt.Sprintf("One backend on one configuration (schema_version %d).", SchemaVersion)
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal schema: %w", err)
	}
	return append(raw, '\n'), nil
}

var (
	compileOnce sync.Once
	compiled    map[int]*jsv.Schema
	compileErr  error
)

// schemas compiles the current schema and every older one still read.
func schemas() (map[int]*jsv.Schema, error) {
	compileOnce.Do(func() {
		compiled = map[int]*jsv.Schema{}
		for version, raw := range map[int][]byte{SchemaVersion: schema.ResultJSON, 1: schema.ResultV1JSON} {
			doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				compileErr = fmt.Errorf("parse embedded result schema v%d: %w", version, err)
				return
			}
			c := jsv.NewCompiler()
			name := fmt.Sprintf("result.v%d.schema.json", version)
			if err := c.AddResource(name, doc); err != nil {
				compileErr = fmt.Errorf("load result schema v%d: %w", version, err)
				return
			}
			if compiled[version], compileErr = c.Compile(name); compileErr != nil {
				return
			}
		}
	})
	return compiled, compileErr
}

func resultSchema() (*jsv.Schema, error) {
	all, err := schemas()
	if err != nil {
		return nil, err
	}
	return all[SchemaVersion], nil
}

// SchemaError lists every place a result broke the schema, in a stable
// order (by field, then reason), so two identical runs report the same.
type SchemaError struct {
	Violations []Violation
}

// Violation is one field and why it is wrong.
type Violation struct {
	Field  string
	Reason string
}

func (e *SchemaError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Reason
	}
	return "result does not match schema at " + strings.Join(parts, "; ")
}

func docError(reason string) *SchemaError {
	return &SchemaError{Violations: []Violation{{Field: "(document)", Reason: reason}}}
}

// Validate checks one JSON-encoded result against the current schema.
func Validate(raw []byte) error {
	s, err := resultSchema()
	if err != nil {
		return err
	}
	return validateWith(s, raw)
}

func validateWith(s *jsv.Schema, raw []byte) error {
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return docError("not JSON: " + err.Error())
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsv.ValidationError
		if errors.As(err, &ve) {
			return leaves(ve)
		}
		return docError(err.Error())
	}
	return nil
}

// leaves collects the most specific causes, each of which names its field.
func leaves(root *jsv.ValidationError) *SchemaError {
	p := message.NewPrinter(language.English)
	seen := map[Violation]bool{}
	var out []Violation
	var walk func(ve *jsv.ValidationError)
	walk = func(ve *jsv.ValidationError) {
		if len(ve.Causes) == 0 {
			v := Violation{Field: "/" + strings.Join(ve.InstanceLocation, "/"), Reason: ve.ErrorKind.LocalizedString(p)}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
			return
		}
		for _, c := range ve.Causes {
			walk(c)
		}
	}
	walk(root)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Reason < out[j].Reason
	})
	return &SchemaError{Violations: out}
}

// DecodeBackendResult validates and decodes a result produced by a backend
// (always the current schema version).
func DecodeBackendResult(raw []byte) (Result, error) {
	if err := Validate(raw); err != nil {
		return Result{}, err
	}
	var r Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return Result{}, fmt.Errorf("decode result: %w", err)
	}
	return r, nil
}
