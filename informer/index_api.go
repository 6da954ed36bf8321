package informer

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/store"
	"github.com/kindex/kindex/jsonpath"
)

// IndexStats describes one index of an informer.
type IndexStats struct {
	// Name is the index name queries use.
	Name string
	// Definition is the canonical JSONPath expression, "builtin:<name>" or "func:<name>".
	Definition string
	// Values is the number of distinct values; Entries the number of (value, object) pairs.
	// query.NonScalar, under which maps and lists are indexed, counts as one value here,
	// though CountBy, which groups by comparable values, leaves it out.
	Values, Entries int
	// Errors counts objects whose values the index could not compute, in whole or in part
	// (an expression that ran out of its JSONPath budget on the object, an object the
	// function cannot read, a function that failed or panicked); LastError is the latest.
	// Such objects are still cached, indexed under the values that were given, and match no
	// NotEq or HasNot condition on the index (package query, "Values that could not all be
	// computed").
	Errors    int64
	LastError error
	// References is the number of informer references holding the name; Shared the number
	// of registrations sharing the underlying index (every name with the same definition, and
	// the owner index of Dependents and Orphans for the built-ins owner-uid and uid).
	References, Shared int
}

// AddIndex indexes the informer's objects by the values of a JSONPath expression (kubectl's
// dialect, with or without braces): "{.spec.nodeName}", "{.spec.containers[*].image}",
// "{.metadata.labels['app.kubernetes.io/name']}". Every value of a multi-valued path is
// indexed; strings, numbers and booleans by their text as kubectl prints them ("3", "1.5",
// "true"); a missing field or null yields no value; a map or list is indexed under
// query.NonScalar (present, with nothing to compare); an object the expression cannot be
// evaluated on within the IndexJSONPath budget is counted in IndexStats.Errors. The objects already cached are indexed before AddIndex
// returns (it may be called before or after the informer syncs), later changes as they
// arrive.
//
// The index belongs to this reference: RemoveIndex or Release removes it. Names are the
// informer's, shared by every reference: registering a name that exists with the same
// expression (compared in canonical form) shares it, with another definition fails with an
// *IndexConflictError (ErrIndexConflict). Names with the same expression share one index.
// An expression that does not compile fails with ErrInvalidIndex and a *jsonpath.SyntaxError
// (errors.As) that holds the byte offset.
//
// In a mode that keeps only part of each object (the compact mode's projection, the
// metadata-only mode), an expression that reads a field the mode drops fails with
// ErrInvalidIndex wrapping the mode's error (dynamicinformer.ErrNotProjected,
// metadataonly.ErrNotMetadata): it would index nothing where the server's objects have
// values.
func (i *Informer[T]) AddIndex(name, expr string) error {
	if !i.valid() {
		return ErrUninitialized
	}
	p, err := jsonpath.CompileWithOptions(expr, i.h.c.indexOpts)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidIndex, quote(name), err)
	}
	return i.AddIndexPath(name, p)
}

// AddIndexPath is AddIndex for an expression compiled already (jsonpath.Compile), with the
// compiler's limits the caller chose: programs that build indexes from their own
// configuration compile each expression once and can report its errors themselves. Names
// with the same expression share one index whatever the limits of their paths: the first
// registration's path evaluates it (its MaxSteps and MaxResults), until every name using it
// is removed.
func (i *Informer[T]) AddIndexPath(name string, p *jsonpath.Path) error {
	if !i.valid() {
		return ErrUninitialized
	}
	if p == nil {
		return fmt.Errorf("%w %s: nil path", ErrInvalidIndex, quote(name))
	}
	if p.String() == "" {
		// The zero Path (no expression compiles to an empty canonical form): it would be
		// refused below as reading no field, which is not what is wrong with it.
		return fmt.Errorf("%w %s: %w", ErrInvalidIndex, quote(name), jsonpath.ErrNotCompiled)
	}
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidIndex)
	}
	spec, err := jsonPathIndex(i.h.c.mode, name, p)
	if err != nil {
		return err
	}
	return i.h.addIndex(name, spec)
}

// jsonPathIndex is the index of a compiled JSONPath on mode: refused if the mode drops a
// field it reads.
func jsonPathIndex(mode storage.Mode, name string, p *jsonpath.Path) (indexSpec, error) {
	if p.Fields() == nil {
		// Literals only ("}", "x", "{'a'}"): every object would be indexed under one
		// constant, which is never what was meant.
		return indexSpec{}, fmt.Errorf("%w %s: the expression %s reads no field of the object", ErrInvalidIndex, quote(name), quote(p.String()))
	}
	if pc, ok := mode.(storage.PathChecker); ok {
		if err := pc.CheckPath(p); err != nil {
			return indexSpec{}, fmt.Errorf("%w %s: %w", ErrInvalidIndex, quote(name), err)
		}
	}
	canon := p.String()
	return indexSpec{key: "jsonpath:" + canon, def: canon, fn: store.IndexFunc(indexfuncs.FromPath(p))}, nil
}

// AddBuiltinIndex registers one of indexfuncs' built-in metadata indexes under its own name
// (indexfuncs.IndexOwnerUID, IndexLabel, ...; see indexfuncs.BuiltinNames), with AddIndex's
// sharing and ownership rules.
func (i *Informer[T]) AddBuiltinIndex(name string) error {
	if !i.valid() {
		return ErrUninitialized
	}
	fn, ok := indexfuncs.Builtin(name)
	if !ok {
		return fmt.Errorf("%w: no built-in index %s (known: %v)", ErrInvalidIndex, quote(name), indexfuncs.BuiltinNames())
	}
	key := "builtin:" + name
	return i.h.addIndex(name, indexSpec{key: key, def: key, fn: store.IndexFunc(fn)})
}

// AddIndexFunc indexes the informer's objects by the values fn returns for each (a T). fn
// runs under the cache's lock, for every object added or changed: it must be fast and must
// not modify the object. A call of the informer from fn that would wait for that lock (a
// read, an index or handler registration) returns ErrCalledFromCallback; Release and
// Factory.Shutdown return at once and take effect once fn has returned (see the package
// documentation, "Concurrency"). An error or a panic does not lose the
// object: it is counted in IndexStats, and the values returned with an error are indexed,
// as some of the object's: it matches no NotEq or HasNot condition on the index. The slice
// fn returns is copied, so fn may reuse it for the next object. A function cannot be
// compared with another, so a name registered with AddIndexFunc is held by one reference
// only: registering it again while held fails with ErrIndexConflict.
func (i *Informer[T]) AddIndexFunc(name string, fn cache.IndexFunc) error {
	if !i.valid() {
		return ErrUninitialized
	}
	if fn == nil {
		return fmt.Errorf("%w %s: nil function", ErrInvalidIndex, quote(name))
	}
	convert := i.h.c.mode.Object
	wrapped := func(item any) ([]string, error) {
		obj, err := convert(item)
		if err != nil {
			return nil, err
		}
		// The index keeps the object's values until it changes: a copy, since fn may
		// reuse the slice it returns (a buffer of its own), as client-go's indexer allows.
		values, err := fn(obj)
		return slices.Clone(values), err
	}
	key := "func:" + name
	return i.h.addIndex(name, indexSpec{key: key, def: key, fn: wrapped, exclusive: true})
}

// AddItemIndexFunc is AddIndexFunc with fn given each object as an Item (ItemHandlerFuncs'
// form): in the compact mode fn decodes what it reads (Eval on the bytes, DecodeInto a typed
// struct) instead of receiving a whole object decoded into the front end's type for every
// change. The same rules and name space as AddIndexFunc. The values fn returns are copied
// into a slice of kindex's (the one fn returns stays fn's, never written to) before they
// are indexed: strings of an object DecodeInto made may be views of the cached bytes (or of
// a chunk shared with the object's other strings), which an index entry would otherwise
// keep alive after the object changed.
func (i *Informer[T]) AddItemIndexFunc(name string, fn func(Item[T]) ([]string, error)) error {
	if !i.valid() {
		return ErrUninitialized
	}
	if fn == nil {
		return fmt.Errorf("%w %s: nil function", ErrInvalidIndex, quote(name))
	}
	c := i.h.c
	wrapped := func(obj any) ([]string, error) {
		values, err := fn(itemOf[T](c, obj))
		if len(values) == 0 {
			return nil, err
		}
		// Into a new slice: the one fn returned is fn's (one slice returned for every
		// object, by several informers at once, must not be written to).
		out := make([]string, len(values))
		for k, v := range values {
			out[k] = strings.Clone(v)
		}
		return out, err
	}
	key := "func:" + name
	return i.h.addIndex(name, indexSpec{key: key, def: key, fn: wrapped, exclusive: true})
}

// RemoveIndex removes an index registered through this reference. The index itself is
// freed when no other reference holds a name with its definition. It returns an error
// matching ErrIndexNotFound if this reference does not hold name.
func (i *Informer[T]) RemoveIndex(name string) error {
	if !i.valid() {
		return ErrUninitialized
	}
	return i.h.removeIndex(name)
}

// IndexStats describes a registered index; an error matching ErrIndexNotFound if name is not
// registered on the informer, ErrCalledFromCallback from one of its index functions;
// ErrReleased after Release and ErrShutdown once the factory stopped, as the reads (the
// stopped informer's emptied index describes nothing).
func (i *Informer[T]) IndexStats(name string) (IndexStats, error) {
	if !i.valid() {
		return IndexStats{}, ErrUninitialized
	}
	if err := i.h.gone(); err != nil {
		return IndexStats{}, err
	}
	return i.h.e.indexStats(name)
}

// IndexNames returns the index names registered on the informer (through any reference),
// sorted. It takes no lock, and answers from an index function too (a name being
// registered by the AddIndex that runs it is not there yet).
func (i *Informer[T]) IndexNames() []string {
	if !i.valid() {
		return nil
	}
	return i.h.e.indexNames()
}
