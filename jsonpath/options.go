package jsonpath

import "fmt"

// Default limits, used when the corresponding Options field is zero.
const (
	// DefaultMaxLength is the default limit on the length of an
	// expression and of its canonical form, in bytes.
	DefaultMaxLength = 4096
	// DefaultMaxNesting is the default limit on how deeply filters and
	// {range} blocks may nest in an expression.
	DefaultMaxNesting = 16
	// DefaultMaxSteps is the default work budget of one evaluation. A
	// step is at most about 150 ns of work, and all work is charged: a
	// step per selector applied to a value and per value a wildcard,
	// slice, filter or descent visits; a step per pass of a {range}
	// body; collecting the items of a {range} or the values of a union,
	// once past 32 KB, a step per 64 bytes copied as their slice grows; sorting the k keys of a map (to
	// visit or print it in key order) about k·log2(k)/4; printing, a step
	// per value, 3 more per map or list (the recursion), and a step per 16
	// bytes of output; on raw JSON, a step per member or element scanned
	// and per 32 bytes of it (3 more for each one kept, to visit or print
	// it), checked as the scan goes, a step per 32 bytes of the rest of an
	// object searched for a duplicate key and of a string gjson reads,
	// for printing a map or list, a step per 32 bytes of it and one for each of
	// the maps and lists nested in it that the printer keeps track of (it
	// scans it once first, so that printing is linear in its size), and,
	// for Eval, a step per 128 bytes of the maps and lists it returns
	// (which it copies); converting
	// a number longer than 32 bytes, a step per 2 bytes, and one that
	// strconv may convert its slow, exact way (more than 19 digits, or an
	// exponent beyond 1e±22) 16 steps and more as its exponent grows, up
	// to 430 (see slowNumCost). Evaluating a typical index expression on a
	// Pod takes fewer than 20 steps (500 to 750 on raw JSON:
	// TestPodIndexSteps); the default stops any expression on any object
	// within about 10 ms of CPU. One kind of object escapes the count: a
	// decoded map from which a program deleted most keys, since a Go map
	// keeps its size and visiting it costs what its former keys did
	// (about 2.7 ms once a million keys are gone: BenchmarkS51cSparseMap),
	// which nothing outside the runtime can see. Decoders never make one.
	DefaultMaxSteps = 1 << 16
	// DefaultMaxResults is the default limit on the number of values one
	// evaluation may produce.
	DefaultMaxResults = 1 << 14
	// MaxDataDepth bounds how deeply evaluation descends into data
	// (recursive descent, and encoding of nested values as JSON). It is
	// not configurable: it protects the goroutine stack. Objects decoded
	// by encoding/json or by Kubernetes' decoders never nest deeper.
	MaxDataDepth = 10000
	// hardMaxNesting bounds Options.MaxNesting; it keeps the parser's
	// recursion well inside the goroutine stack.
	hardMaxNesting = 1000
)

// Options sets the limits of a compiled Path. The zero value selects the
// defaults, which are suitable for untrusted expressions and objects.
type Options struct {
	// MaxLength is the maximum length in bytes of the expression and of
	// its canonical form (Path.String, which can be longer: {..*} is
	// {..[*]}), so that the canonical form of any expression compiles.
	// Zero means DefaultMaxLength; negative means no limit.
	MaxLength int
	// MaxNesting is the maximum nesting depth of filters ([?(...)],
	// which may contain paths with filters) and {range} blocks.
	// Zero means DefaultMaxNesting; it must not exceed 1000.
	MaxNesting int
	// MaxSteps is the work budget of each evaluation (see
	// DefaultMaxSteps). Zero means DefaultMaxSteps; negative means no
	// limit. When it is exhausted the evaluation stops with a
	// *BudgetError.
	MaxSteps int
	// MaxResults is the maximum number of values one evaluation may
	// produce. Zero means DefaultMaxResults; negative means no limit.
	MaxResults int
}

// limits are Options with defaults applied; -1 means unlimited.
type limits struct {
	maxLength, maxNesting, maxSteps, maxResults int
	maxDepth                                    int // MaxDataDepth; lower in tests
}

func (o Options) limits() (limits, error) {
	l := limits{
		maxLength:  pick(o.MaxLength, DefaultMaxLength),
		maxNesting: o.MaxNesting,
		maxSteps:   pick(o.MaxSteps, DefaultMaxSteps),
		maxResults: pick(o.MaxResults, DefaultMaxResults),
		maxDepth:   MaxDataDepth,
	}
	switch {
	case o.MaxNesting == 0:
		l.maxNesting = DefaultMaxNesting
	case o.MaxNesting < 0 || o.MaxNesting > hardMaxNesting:
		return limits{}, fmt.Errorf("%w: MaxNesting %d is outside [0, %d]", ErrInvalidOptions, o.MaxNesting, hardMaxNesting)
	}
	return l, nil
}

func pick(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}
