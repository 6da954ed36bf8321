package jsonpath

// The work of one evaluation is bounded by a budget, so that hostile
// expressions and objects cannot stall the process (see Options).

// budget counts the steps of one evaluation.
type budget struct {
	steps    int
	maxSteps int // negative: unlimited
	maxDepth int // data nesting limit: MaxDataDepth, lower in tests
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
		if b.err == nil {
			b.err = &BudgetError{Limit: "steps", Max: b.maxSteps}
		}
		return false
	}
	return true
}

// textBytesPerStep is how many bytes of template output cost one step.
const textBytesPerStep = 16

// scanBytesPerStep is how many bytes of raw JSON cost one step: gjson
// scans an object or array to find a member or an element.
const scanBytesPerStep = 64

// init sets up a fresh budget for an evaluation. (It sets fields in
// place: building a budget and copying it stalls the CPU, see setValue.)
func (b *budget) init(l *limits) {
	b.maxSteps, b.maxDepth = l.maxSteps, l.maxDepth
}
