//go:generate go run ../cmd/genschema ../../schema/result.schema.json

package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	compiled    *jsv.Schema
	compileErr  error
)

func resultSchema() (*jsv.Schema, error) {
	compileOnce.Do(func() {
		doc, err := jsv.UnmarshalJSON(bytes.NewReader(schema.ResultJSON))
		if err != nil {
			compileErr = fmt.Errorf("parse embedded result schema: %w", err)
			return
		}
		c := jsv.NewCompiler()
		if err := c.AddResource("result.schema.json", doc); err != nil {
			compileErr = fmt.Errorf("load result schema: %w", err)
			return
		}
		compiled, compileErr = c.Compile("result.schema.json")
	})
	return compiled, compileErr
}

// SchemaError says which field of a result broke the schema.
type SchemaError struct {
	Field  string
	Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("result does not match schema at %s: %s", e.Field, e.Reason)
}

// Validate checks one JSON-encoded result against the committed schema.
func Validate(raw []byte) error {
	s, err := resultSchema()
	if err != nil {
		return err
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &SchemaError{Field: "(document)", Reason: "not JSON: " + err.Error()}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsv.ValidationError
		if errors.As(err, &ve) {
			return firstLeaf(ve)
		}
		return &SchemaError{Field: "(document)", Reason: err.Error()}
	}
	return nil
}

// firstLeaf walks to the most specific cause, which names the field.
func firstLeaf(ve *jsv.ValidationError) *SchemaError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	field := "/" + strings.Join(ve.InstanceLocation, "/")
	return &SchemaError{Field: field, Reason: ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))}
}

// DecodeBackendResult validates and decodes a result produced by a backend.
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
