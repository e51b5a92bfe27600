package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// products are mixed-case names of libraries and tools that a doc comment
// may start with: they are not Go identifiers of this repository (all-caps
// names such as CUPTI are never taken for identifiers: identLike).
var products = map[string]bool{
	"ROCm": true, "hipRTC": true, "cuBLAS": true, "cuBLASLt": true, "hipBLASLt": true, "rocBLAS": true,
	"PyTorch": true, "cuDNN": true,
}

// identLike is a word shaped like a Go identifier in mixed case
// (TimeGEMM, captureInto): a doc comment that starts with one names a
// declaration, while plain words (The, On, Every) and acronyms (GEMM) do not.
func identLike(w string) bool {
	lower, innerUpper := false, false
	for i, r := range w {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			innerUpper = innerUpper || i > 0
		case unicode.IsDigit(r) || r == '_':
		default:
			return false
		}
	}
	return lower && innerUpper
}

type docDecl struct {
	name, first string
	pos         token.Position
}

// goFiles parses every Go file of the repository outside vendored,
// generated and data folders.
func goFiles(t *testing.T, root string) (*token.FileSet, []*ast.File) {
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".venv", "results", "docs", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatalf("parse the repository's Go files: %v", err)
	}
	return fset, files
}

// declared collects every name the files declare at any level (functions,
// methods, types, fields, constants, variables), and the top-level
// declarations whose doc comment starts with an identifier-like word.
func declared(fset *token.FileSet, files []*ast.File) (map[string]bool, []docDecl) {
	names := map[string]bool{}
	var docs []docDecl
	check := func(doc *ast.CommentGroup, name string, pos token.Pos) {
		if doc == nil {
			return
		}
		words := strings.Fields(doc.Text())
		if len(words) == 0 {
			return
		}
		first := strings.TrimRight(words[0], ",.:;")
		if first != name && identLike(first) && !products[first] {
			docs = append(docs, docDecl{name, first, fset.Position(pos)})
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				names[id.Name] = true
			}
			return true
		})
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				check(d.Doc, d.Name.Name, d.Pos())
			case *ast.GenDecl:
				for _, s := range d.Specs {
					doc := d.Doc
					if len(d.Specs) > 1 {
						doc = nil
					}
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Doc != nil {
							doc = s.Doc
						}
						check(doc, s.Name.Name, s.Pos())
					case *ast.ValueSpec:
						if s.Doc != nil {
							doc = s.Doc
						}
						if len(s.Names) == 1 {
							check(doc, s.Names[0].Name, s.Pos())
						}
					}
				}
			}
		}
	}
	return names, docs
}

// A doc comment that starts with an identifier no Go file of the repository
// uses any more was left behind by a rename: it documents a name a reader
// cannot find (Go's convention is that it starts with the declared name).
func TestDocCommentsNameLiveIdentifiers(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	fset, files := goFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("parsed %d Go files under %s, expected the whole repository", len(files), root)
	}
	names, docs := declared(fset, files)
	for _, d := range docs {
		if !names[d.first] {
			rel, _ := filepath.Rel(root, d.pos.Filename)
			t.Errorf("%s:%d: the doc comment of %s starts with %s, which no Go file declares or uses (renamed?)",
				rel, d.pos.Line, d.name, d.first)
		}
	}
}

func TestIdentLike(t *testing.T) {
	for w, want := range map[string]bool{
		"TimeGEMM": true, "captureInto": true, "cuLaunchConfig": true, "ltVersion": true, "lt_version": false,
		"The": false, "GEMM": false, "On": false, "x86-64": false, "Every": false, "nanWord": true,
	} {
		if got := identLike(w); got != want {
			t.Errorf("identLike(%q) = %v, want %v", w, got, want)
		}
	}
}
