package compact

import (
	"errors"
	"fmt"

	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/jsonpath"
)

// projection is the set of key paths an object keeps besides apiVersion, kind and
// metadata: a tree of object keys whose leaves keep their whole subtree.
type projection struct {
	leaf     bool // keep everything below
	children map[string]*projection
}

// newProjection compiles JSONPath expressions (kubectl's dialect, as indexes and queries
// take them) and returns the union of the key paths they read (jsonpath.Path.Fields), or
// nil when one of them needs the whole object; paths are compiled already (the factory's
// indexes) and add theirs. An empty list keeps only apiVersion, kind and metadata.
func newProjection(exprs []string, paths []*jsonpath.Path) (*projection, error) {
	root := &projection{children: map[string]*projection{}}
	for i, expr := range exprs {
		p, err := jsonpath.Compile(expr)
		if err != nil {
			// The syntax error quotes the expression, cut to a bounded length.
			return nil, fmt.Errorf("compact: Projection[%d]: %w", i, err)
		}
		paths = append(paths, p)
	}
	for _, p := range paths {
		for _, path := range p.Fields() {
			if len(path) == 0 {
				return nil, nil // the expression reads the whole object
			}
			root.add(path)
		}
	}
	return root, nil
}

func (p *projection) add(path []string) {
	n := p
	for _, k := range path {
		if n.leaf {
			return
		}
		c := n.children[k]
		if c == nil {
			c = &projection{children: map[string]*projection{}}
			n.children[k] = c
		}
		n = c
	}
	n.leaf, n.children = true, nil
}

// child returns the subtree kept under the member's key, or nil to drop the member.
func (p *projection) child(b []byte, m *member) *projection {
	if !m.keyEscaped {
		return p.children[string(m.key(b))]
	}
	return p.children[m.keyString(b)]
}

// alwaysKept reports whether a top-level member survives any projection.
func alwaysKept(b []byte, m *member) bool {
	return m.is(b, "metadata") || m.is(b, "apiVersion") || m.is(b, "kind")
}

// emitProjected writes the value b[start:end] (validated, with depth containers around
// it) keeping only the keys of p: an object value with children keeps the members p names,
// recursively; anything else (a leaf, or a value that is not an object) is kept whole, so
// the projection never changes what the expressions read.
func (w *writer) emitProjected(b []byte, start, end, depth int, p *projection) error {
	if p.leaf || b[start] != '{' {
		w.span(start, end)
		return nil
	}
	w.lit("{")
	first := true
	_, err := eachMember(b, start, depth, func(m member) (int, error) {
		valEnd, err := skipValue(b, m.valStart, depth+1)
		if err != nil {
			return valEnd, err
		}
		c := p.child(b, &m)
		if c == nil {
			return valEnd, nil
		}
		if !first {
			w.lit(",")
		}
		first = false
		w.span(m.keyStart, m.valStart)
		return valEnd, w.emitProjected(b, m.valStart, valEnd, depth+1, c)
	})
	w.lit("}")
	return err
}

// ErrNotProjected is wrapped by the error for an expression that reads fields a projection
// drops: evaluated on projected objects it would find nothing where the server's objects
// have values.
var ErrNotProjected = errors.New("reads fields the projection drops")

// ProjectionError names the field an expression reads that the projection drops.
type ProjectionError struct {
	Expr  string // the expression, canonical
	Field string // the first key path it reads that is not kept whole, as ".a.b"
}

func (e *ProjectionError) Error() string {
	return fmt.Sprintf("compact: %s %s (%s)", e.Expr, ErrNotProjected, e.Field)
}

// Unwrap makes errors.Is(err, ErrNotProjected) true.
func (e *ProjectionError) Unwrap() error { return ErrNotProjected }

// CheckPath returns a *ProjectionError if p reads a field the decoder's projection does not
// keep whole (nil without a projection), and an error wrapping
// storage.ErrManagedFieldsDropped if it reads metadata.managedFields, which are cut unless
// Options.KeepManagedFields: an index or query on them would silently find less than the
// server holds. apiVersion, kind and the rest of metadata are always kept.
func (d *Decoder) CheckPath(p *jsonpath.Path) error {
	if d == nil {
		return nil
	}
	if err := storage.CheckManagedFields("compact", d.keep, p); err != nil {
		return err
	}
	if d.proj == nil {
		return nil
	}
	for _, path := range p.Fields() {
		if !d.proj.covers(path) {
			return &ProjectionError{Expr: p.String(), Field: storage.FieldString(path)}
		}
	}
	return nil
}

// covers reports whether everything under the key path is kept.
func (p *projection) covers(path []string) bool {
	if len(path) == 0 {
		return false // the whole object
	}
	switch path[0] {
	case "metadata", "apiVersion", "kind":
		return true
	}
	n := p
	for _, k := range path {
		if n.leaf {
			return true
		}
		if n = n.children[k]; n == nil {
			return false
		}
	}
	return n.leaf
}
