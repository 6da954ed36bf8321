package refs

import (
	"slices"
	"strings"
)

// TreeNode is one object of a tree of references (Tree).
type TreeNode struct {
	// Object is the object this node shows.
	Object ObjectRef
	// Edge is the edge between the parent and this object; nil at the root.
	Edge *Edge
	// Children are the objects this one uses (a tree of References) or that use it (of
	// Referrers), in the order of the edges.
	Children []*TreeNode
	// Repeated marks an object shown earlier in the tree, with its children there.
	Repeated bool
}

// Tree arranges the edges of a walk from root as a tree: the edges of References(root, n),
// or of Referrers(root, n) with reverse set. Each object's children are shown once, at its
// first place in breadth-first order (its shortest path from root); later places are
// Repeated leaves, so a cycle or a diamond prints finitely.
func Tree(root ObjectRef, edges []Edge, reverse bool) *TreeNode {
	parentOf := func(e *Edge) ObjectRef {
		if reverse {
			return e.To
		}
		return e.From
	}
	childOf := func(e *Edge) ObjectRef {
		if reverse {
			return e.From
		}
		return e.To
	}
	byParent := map[string][]*Edge{}
	var first []*Edge
	for i := range edges {
		e := &edges[i]
		if e.Depth == 1 {
			first = append(first, e) // the root as the graph names it
			continue
		}
		k := treeKey(parentOf(e))
		byParent[k] = append(byParent[k], e)
	}
	top := &TreeNode{Object: root}
	expanded := map[string]bool{treeKey(root): true}
	if len(first) > 0 { // the root as the graph names it (no namespace if cluster-scoped)
		expanded[treeKey(parentOf(first[0]))] = true
	}
	type item struct {
		n     *TreeNode
		edges []*Edge
	}
	queue := []item{{top, first}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, e := range it.edges {
			child := &TreeNode{Object: childOf(e), Edge: e}
			it.n.Children = append(it.n.Children, child)
			k := treeKey(child.Object)
			if expanded[k] {
				child.Repeated = true
				continue
			}
			expanded[k] = true
			queue = append(queue, item{child, byParent[k]})
		}
	}
	return top
}

// treeKey identifies an object: by resource, or by kind for a kind that did not resolve.
func treeKey(r ObjectRef) string {
	typ := r.Resource
	if typ == "" {
		typ = "kind:" + r.Kind
	}
	return r.Group + "\x00" + typ + "\x00" + r.Namespace + "\x00" + r.Name
}

// String renders the tree, one object a line, each child under its parent with the rule
// of its edge, "(optional)" when the reference is optional, its state when not Present,
// and "(shown above)" when Repeated:
//
//	pods/shop/web-1
//	├── [owner] replicasets.apps/shop/web-1
//	│   └── [owner] deployments.apps/shop/web
//	├── [pods:node] nodes/node-a (Missing: not found)
//	└── [pods:volume-configmap] configmaps/shop/web-extra (optional) (Missing: not found)
//
// A nil node renders as "", nil children are left out, and a child without an Edge (a tree
// built by hand) is shown without a rule.
func (n *TreeNode) String() string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(n.Object.String())
	b.WriteByte('\n')
	n.writeChildren(&b, "")
	return b.String()
}

func (n *TreeNode) writeChildren(b *strings.Builder, prefix string) {
	children := n.Children
	if slices.Contains(children, nil) {
		children = slices.DeleteFunc(slices.Clone(children), func(c *TreeNode) bool { return c == nil })
	}
	for i, c := range children {
		last := i == len(children)-1
		branch, indent := "├── ", "│   "
		if last {
			branch, indent = "└── ", "    "
		}
		b.WriteString(prefix)
		b.WriteString(branch)
		e := c.Edge
		if e == nil {
			e = &Edge{}
		} else {
			b.WriteString("[" + e.Rule + "] ")
		}
		b.WriteString(c.Object.String())
		if e.Optional {
			b.WriteString(" (optional)")
		}
		if e.State != Present && e.State != 0 {
			b.WriteString(" (" + e.State.String())
			if e.Reason != "" {
				b.WriteString(": " + e.Reason)
			}
			b.WriteString(")")
		}
		if c.Repeated {
			b.WriteString(" (shown above)")
		}
		b.WriteByte('\n')
		c.writeChildren(b, prefix+indent)
	}
}

// CheckRules reports whether rules can be used, as New would: nil, or a *RuleError
// (ErrInvalidRule) naming the first rule that cannot. Programs that read rules from their
// users' configuration check them before starting anything.
func CheckRules(rules []Rule) error {
	_, err := compileRules(rules)
	return err
}
