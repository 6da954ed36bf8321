package jsonpath

import (
	"math"
	"math/bits"
)

// The work of one evaluation is bounded by a budget, so that hostile
// expressions and objects cannot stall the process (see Options). Every
// piece of work is charged before it is done, in proportion to its cost,
// or, where its cost is known only as it goes (scanning raw JSON,
// escaping a string as JSON), as it is done, so that an evaluation stops
// at most one step of work (one member or element of raw JSON, one value
// printed, 4 KB of a string escaped) past its budget.
//
// The costs below make a step take at most about 150 ns of CPU, so that
// the default budget stops any evaluation within 10 ms;
// TestHostileInputsAreBounded logs them on hostile inputs.

// budget counts the steps of one evaluation.
type budget struct {
	steps    int
	maxSteps int // negative: unlimited
	maxDepth int // data nesting limit: MaxDataDepth, lower in tests
	spent    int // steps charged before the charge that failed
	err      error
}

// depthLimit is the data nesting limit; a nil budget has MaxDataDepth.
func (b *budget) depthLimit() int {
	if b == nil {
		return MaxDataDepth
	}
	return b.maxDepth
}

// tooDeep returns the error for data nested deeper than the limit.
func (b *budget) tooDeep() error {
	return &BudgetError{Limit: "depth", Max: b.depthLimit()}
}

// charge adds n steps and reports whether the budget still holds. A nil
// budget is unlimited.
func (b *budget) charge(n int) bool {
	if b == nil {
		return true
	}
	b.steps += n
	if b.maxSteps >= 0 && b.steps > b.maxSteps {
		b.exhausted(n)
		return false
	}
	return true
}

// exhausted records the failure of a charge of n steps.
func (b *budget) exhausted(n int) {
	if b.err == nil {
		b.err = &BudgetError{Limit: "steps", Max: b.maxSteps}
		b.spent = b.steps - n
	}
}

// left returns the steps that remain: work that costs more must not be
// started (or must stop as soon as its cost exceeds them).
func (b *budget) left() int {
	if b == nil || b.maxSteps < 0 {
		return math.MaxInt
	}
	return b.maxSteps - b.steps
}

// charged returns the steps of the work done: all the steps charged but
// those of a charge that failed (its work was not done).
func (b *budget) charged() int {
	if be, ok := b.err.(*BudgetError); ok && be.Limit == "steps" {
		return b.spent
	}
	return b.steps
}

// init sets up a fresh budget for an evaluation. (It sets fields in
// place: building a budget and copying it stalls the CPU, see setValue.)
func (b *budget) init(l *limits) {
	b.maxSteps, b.maxDepth = l.maxSteps, l.maxDepth
}

// The costs of work, in steps, beyond the one step of each value visited
// (see DefaultMaxSteps).
const (
	// textBytesPerStep is how many bytes of output cost a step.
	textBytesPerStep = 16
	// scanBytesPerStep is how many bytes of raw JSON cost a step when the
	// scanner steps over a member or an element (which also costs a
	// step), or when a field lookup searches the rest of an object for a
	// duplicate key. The scanner's worst case is text made of brackets
	// only, at 2 to 3.4 ns a byte (TestHostileInputsAreBounded logs it):
	// 32 bytes take at most about 110 ns.
	scanBytesPerStep = 32
	// copyBytesPerStep is how many bytes of the text of a map or list
	// Eval copies from raw JSON (see detach) cost a step: a copy (memmove
	// into fresh memory) costs a fraction of scanning the same bytes.
	copyBytesPerStep = 128
	// cmpBytesPerStep is how many bytes of two strings a comparison
	// costs a step.
	cmpBytesPerStep = 1024
)

// sortCost returns the steps that sorting k keys of keyBytes bytes in all
// costs (the keys of a map, to visit or print it in key order): a
// comparison sort makes about log2(k) passes over the keys, and each
// comparison reads at most the shorter key. (Sorting the 10,000 keys of a
// map takes about 4 ms: 47,000 steps.)
func sortCost(k, keyBytes int) int {
	if k < 2 {
		return 0
	}
	return bits.Len(uint(k)) * (k + keyBytes/scanBytesPerStep) / 4
}

// itemCost returns the steps that scanning a member or an element of raw
// JSON costs, given its text.
func itemCost(raw string) int {
	return 1 + len(raw)/scanBytesPerStep
}

// keepCost is the steps that keeping a parsed member or element costs, to
// visit or print all of them (a gjson.Result of 80 bytes, appended to a
// growing slice, which the garbage collector scans).
const keepCost = 3

// meter, set by tests only, adds up the work evaluations do, in steps,
// where it is done (sorting keys, scanning raw JSON, converting numbers,
// comparing and printing strings), apart from the charges of the budget:
// FuzzBudget checks that the work never exceeds the steps charged, that
// is, that no work escapes the budget. It is nil otherwise, which costs a
// nil check.
var meter *workMeter

type workMeter struct {
	work    int // steps of work done, as measured where it is done
	steps   int // steps charged, a failed charge included
	charged int // steps charged, a failed charge excluded
}

func (m *workMeter) did(n int) {
	if m != nil {
		m.work += n
	}
}

// ran records the charges of an evaluation.
func (m *workMeter) ran(b *budget) {
	if m != nil {
		m.steps += b.steps
		m.charged += b.charged()
	}
}
