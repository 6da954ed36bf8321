package jsonpath

// template executes template nodes on root, appending text to out the way
// kubectl's Execute prints: literal text as is; for each action, its
// values separated by single spaces (strings unquoted, maps and lists as
// JSON); for each {range}, the body once per value of the range
// expression, with that value as the current node ($ and @).
func (ev *evaluator[N, T]) template(nodes []node, root N, out *sink[N]) bool {
	for i := range nodes {
		nd := &nodes[i]
		switch nd.kind {
		case nodeText:
			if out.kind == sinkGroups {
				out.group = appendJSONString(append(out.group[:0], '['), nd.text)
				if !ev.charge(1) || !ev.endGroup(out) {
					return false
				}
				continue
			}
			out.text = append(out.text, nd.text...)
			if !ev.charge(1) || !wrote(&ev.budget, len(nd.text)) {
				return false
			}
		case nodeAction:
			out.count = 0
			if out.kind == sinkGroups {
				out.group = append(out.group[:0], '[')
			}
			for j := range nd.exprs {
				if !ev.query(&nd.exprs[j], root, out) {
					return false
				}
			}
			if out.kind == sinkGroups && !ev.endGroup(out) {
				return false
			}
		case nodeRange:
			level := ev.level
			if level == len(ev.ranges) {
				ev.ranges = append(ev.ranges, nil)
			}
			items := sink[N]{kind: sinkCollect, nodes: ev.ranges[level][:0]}
			for j := range nd.exprs {
				if !ev.query(&nd.exprs[j], root, &items) {
					return false
				}
			}
			// Each pass of the body costs a step even if the body prints nothing and
			// reads only @: nested ranges over unions of @ would otherwise multiply
			// their passes for free.
			ev.level++
			for _, it := range items.nodes {
				if !ev.charge(1) {
					return false
				}
				meter.did(1)
				if !ev.template(nd.body, it, out) {
					return false
				}
			}
			ev.level--
			ev.ranges[level] = items.nodes[:0]
		}
	}
	return true
}
