package refs

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/jsonpath"
)

// rawTarget is a reference as a rule read it from an object, before the graph resolves its
// kind and namespace.
type rawTarget struct {
	rule *crule
	res  resID // the target resource; noRes when the reference names a kind
	// group and kind of a reference that names its kind.
	group, kind string
	// ns is the namespace the value names ("" when it names none).
	ns   string
	name string
	uid  types.UID
	// opt: the value marks the reference optional (the rule's OptionalField is true).
	opt bool
}

// selSpec is what one selector rule read from an object: the selectors its values hold
// (an object selects what any of them matches).
type selSpec struct {
	rule *crule
	sels []labels.Selector
	text string // canonical text, to tell a change
}

// reading is what the graph takes from one object: its identity, its labels when its
// resource is selected by some rule, and the references its rules find.
type reading struct {
	ns, name string
	uid      types.UID
	labels   map[string]string
	raws     []rawTarget
	sels     []selSpec
	// cut names a rule whose evaluation failed (its JSONPath budget: more than 16,384
	// values, say): the references found before the failure are kept, the rest are missing.
	cut string
	err error
}

// read evaluates rs's rules on obj. It runs without the graph's lock: it touches only
// the object and the immutable rules. Objects may be *unstructured.Unstructured, anything
// with RawJSON (kindex's compact objects, read without decoding) or anything exposing
// metav1.Object (metadata-only objects, whose .metadata the rules may read).
func read(rs *resRules, obj any) (reading, error) {
	var r reading
	m, err := meta.Accessor(obj)
	if err != nil {
		return r, fmt.Errorf("refs: cannot read the metadata of a %T", obj)
	}
	r.ns, r.name, r.uid = m.GetNamespace(), m.GetName(), m.GetUID()
	if rs.selTarget {
		r.labels = m.GetLabels()
	}
	src := source{obj: obj, name: r.name}
	if rj, ok := obj.(indexfuncs.RawJSON); ok {
		src.raw = true
		if len(rs.rules) >= decodeFrom {
			// Decoded once, the rules read a map: each rule's scan of the bytes costs about
			// what the decode does (bytes of a compressed object are decompressed once).
			if m, err := jsondecode.Object(rj.RawJSON()); err == nil && m != nil {
				src.obj, src.raw = m, false
			}
		}
	}
	r.raws = make([]rawTarget, 0, 8)
	for _, rule := range rs.rules {
		if rule.unless != nil && src.holds(rule.unless, rule.Unless.Values) {
			continue // the rule does not apply to this object
		}
		switch rule.kind {
		case kindSelector:
			if s, ok := readSelectors(rule, &src); ok {
				r.sels = append(r.sels, s)
			}
		default:
			r.raws = readRefs(rule, &src, r.raws)
		}
	}
	r.raws = dedupe(r.raws)
	r.cut, r.err = src.cut, src.err
	return r, nil
}

// decodeFrom is the number of rules from which read decodes an object held as JSON bytes
// once rather than have each rule scan them: a rule's JSONPath on the bytes scans them (a
// field walk every member before the field, a wildcard every element), at about the cost
// of decoding the whole object (BenchmarkEvent, a Pod update from its bytes with 23 rules:
// 89-103 µs scanned by each rule, 13-18 µs decoded once). Resources with few rules keep
// reading the bytes, so that a large object with one rule is not decoded.
const decodeFrom = 4

// source evaluates paths on one object, into one buffer reused for every rule, building the
// metadata map of a metadata-only object once.
type source struct {
	obj  any
	name string // the object's name, for rules NamedAfterSource
	raw  bool   // values decoded from the bytes may share memory with larger buffers
	meta map[string]any
	buf  []jsonpath.Value
	// The first failed evaluation: its path, and its error.
	cut string
	err error
}

// values returns p's values on the object, valid until the next call. A failed evaluation
// (a budget exceeded) yields what was found before it, and is recorded (cut, err).
func (s *source) values(p *jsonpath.Path) []jsonpath.Value {
	var err error
	switch o := s.obj.(type) {
	case *unstructured.Unstructured:
		s.buf, err = p.AppendEval(s.buf[:0], o.Object)
	case map[string]any:
		s.buf, err = p.AppendEval(s.buf[:0], o)
	case indexfuncs.RawJSON:
		// On the bytes, without decoding the object; the values do not refer to the bytes.
		s.buf, err = p.AppendEval(s.buf[:0], jsonpath.JSON(o.RawJSON()))
	default:
		if s.meta == nil {
			m, merr := meta.Accessor(s.obj)
			if merr != nil {
				return nil
			}
			s.meta = metadataMap(m)
		}
		s.buf, err = p.AppendEval(s.buf[:0], s.meta)
	}
	if err != nil && s.err == nil {
		s.cut, s.err = p.String(), err
	}
	return s.buf
}

// holds reports whether p yields, on the object, a scalar whose text is one of values.
func (s *source) holds(p *jsonpath.Path, values []string) bool {
	for _, v := range s.values(p) {
		if v.IsScalar() && slices.Contains(values, v.String()) {
			return true
		}
	}
	return false
}

// metadataMap renders the metadata of a metadata-only object as an unstructured object
// would hold it: every field of ObjectMeta but managedFields (which kindex's metadata-only
// informers drop) and the long-deprecated selfLink, so that a rule reading .metadata finds
// on it what it finds on the same object in any other storage mode.
func metadataMap(m metav1.Object) map[string]any {
	md := map[string]any{"name": m.GetName()}
	str := func(k, v string) {
		if v != "" {
			md[k] = v
		}
	}
	str("generateName", m.GetGenerateName())
	str("namespace", m.GetNamespace())
	str("uid", string(m.GetUID()))
	str("resourceVersion", m.GetResourceVersion())
	if g := m.GetGeneration(); g != 0 {
		md["generation"] = g
	}
	if t := m.GetCreationTimestamp(); !t.IsZero() {
		md["creationTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	if t := m.GetDeletionTimestamp(); t != nil {
		md["deletionTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	if s := m.GetDeletionGracePeriodSeconds(); s != nil {
		md["deletionGracePeriodSeconds"] = *s
	}
	if l := m.GetLabels(); len(l) > 0 {
		md["labels"] = anyMap(l)
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		md["annotations"] = anyMap(a)
	}
	if owners := m.GetOwnerReferences(); len(owners) > 0 {
		list := make([]any, len(owners))
		for i, o := range owners {
			ref := map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name, "uid": string(o.UID)}
			if o.Controller != nil {
				ref["controller"] = *o.Controller
			}
			if o.BlockOwnerDeletion != nil {
				ref["blockOwnerDeletion"] = *o.BlockOwnerDeletion
			}
			list[i] = ref
		}
		md["ownerReferences"] = list
	}
	if fs := m.GetFinalizers(); len(fs) > 0 {
		list := make([]any, len(fs))
		for i, f := range fs {
			list[i] = f
		}
		md["finalizers"] = list
	}
	return map[string]any{"metadata": md}
}

func anyMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// readRefs appends the references rule finds in the object to dst. A value of the wrong
// shape names nothing; a list stands for its elements (a path that ends at a list,
// {.spec.secretNames}, reads as {.spec.secretNames[*]}).
func readRefs(rule *crule, src *source, dst []rawTarget) []rawTarget {
	for _, v := range src.values(rule.path) {
		switch v.Kind() {
		case jsonpath.KindString:
			dst = refOfName(rule, src, v.String(), dst)
		case jsonpath.KindMap:
			m, _ := v.Interface().(map[string]any)
			dst = refOfObject(rule, m, src.raw, dst)
		case jsonpath.KindList:
			items, _ := v.Interface().([]any)
			for _, x := range items {
				switch x := x.(type) {
				case string:
					if src.raw { // a view of the decoded list's text
						x = strings.Clone(x)
					}
					dst = refOfName(rule, src, x, dst)
				case map[string]any:
					dst = refOfObject(rule, x, src.raw, dst)
				}
			}
		}
	}
	return dst
}

// templated reports a value that is a template for names rather than a name: "${pvc.name}"
// in a StorageClass's CSI parameters, which the provisioner fills in per claim. No object
// name holds "${", so such a value names no object the graph could find.
func templated(s string) bool { return strings.Contains(s, "${") }

// refOfName appends the reference of a value that is a name, if rule reads names: the name,
// or for a rule NamedAfterSource the source's name, "-" and the value.
func refOfName(rule *crule, src *source, name string, dst []rawTarget) []rawTarget {
	if rule.kind != kindNames || name == "" || templated(name) {
		return dst
	}
	if rule.NamedAfterSource {
		name = src.name + "-" + name
	}
	return append(dst, rawTarget{rule: rule, res: rule.toID, name: name})
}

// refOfObject appends the reference of a value that is an object, if rule reads object
// references and the value names something it follows. raw: the value was decoded from
// JSON bytes, its strings views of the decoded value's text, which the reference copies.
func refOfObject(rule *crule, m map[string]any, raw bool, dst []rawTarget) []rawTarget {
	if rule.kind != kindObjects {
		return dst
	}
	t := rawTarget{rule: rule, res: rule.toID}
	if !objectRef(rule, m, &t) || t.name == "" || templated(t.name) || templated(t.ns) {
		return dst
	}
	if raw { // keep exact copies, not views of the decoded value's text
		t.name, t.ns, t.kind, t.group = strings.Clone(t.name), strings.Clone(t.ns), strings.Clone(t.kind), strings.Clone(t.group)
		t.uid = types.UID(strings.Clone(string(t.uid)))
	}
	return append(dst, t)
}

// objectRef reads a reference from an object value; false if it names nothing rule follows.
func objectRef(rule *crule, m map[string]any, t *rawTarget) bool {
	str := func(field string) string {
		if field == "" {
			return ""
		}
		s, _ := m[field].(string)
		return s
	}
	t.name = str(rule.NameField)
	t.ns = str(rule.NamespaceField)
	t.uid = types.UID(str(rule.UIDField))
	if rule.OptionalField != "" {
		t.opt, _ = m[rule.OptionalField].(bool)
	}
	if !rule.byKind {
		return t.name != ""
	}
	t.res = noRes
	if t.kind = str(rule.KindField); t.kind == "" {
		t.kind = rule.DefaultKind
	}
	if t.kind == "" || (rule.kinds != nil && !rule.kinds[t.kind]) {
		return false
	}
	switch {
	case rule.APIVersionField != "" && str(rule.APIVersionField) != "":
		t.group = groupOfAPIVersion(str(rule.APIVersionField))
	default: // a group field or apiVersion that is absent or empty means To.Group
		if t.group = str(rule.GroupField); t.group == "" {
			t.group = rule.To.Group
		}
	}
	return t.name != ""
}

// dedupe drops repeated references (two volumes of one ConfigMap are one edge), keeping
// the first of each; the reference kept is optional only if every repetition is.
func dedupe(raws []rawTarget) []rawTarget {
	if len(raws) < 2 {
		return raws
	}
	if len(raws) <= 16 {
		out := raws[:0]
	next:
		for _, r := range raws {
			for i, o := range out {
				o.opt = r.opt // compared apart
				if o == r {
					out[i].opt = out[i].opt && r.opt
					continue next
				}
			}
			out = append(out, r)
		}
		return out
	}
	seen := make(map[rawTarget]int, len(raws))
	out := raws[:0]
	for _, r := range raws {
		k := r
		k.opt = false
		if i, ok := seen[k]; ok {
			out[i].opt = out[i].opt && r.opt
			continue
		}
		seen[k] = len(out)
		out = append(out, r)
	}
	return out
}

// readSelectors reads the selectors of a selector rule; false when the object selects
// nothing by it (no selector, an empty map selector, a null one, an invalid one).
func readSelectors(rule *crule, src *source) (selSpec, bool) {
	s := selSpec{rule: rule}
	var texts []string
	add := func(m map[string]any) {
		var sel labels.Selector
		switch rule.Selector {
		case SelectorMap:
			sel = mapSelector(m)
		case SelectorLabelSelector:
			sel = labelSelector(m)
		}
		if sel != nil {
			s.sels = append(s.sels, sel)
			texts = append(texts, "{"+sel.String()+"}")
		}
	}
	for _, v := range src.values(rule.path) {
		switch v.Kind() {
		case jsonpath.KindMap:
			m, _ := v.Interface().(map[string]any)
			add(m)
		case jsonpath.KindList: // a list of selectors: each selects
			items, _ := v.Interface().([]any)
			for _, x := range items {
				if m, ok := x.(map[string]any); ok {
					add(m)
				}
			}
		}
	}
	if len(s.sels) == 0 {
		return s, false
	}
	sort.Strings(texts)
	s.text = strings.Join(texts, " ")
	return s, true
}

// mapSelector is a Service-style selector: every key must have its value. Empty, or with a
// value that is not a string or not a valid label value, it selects nothing (nil).
func mapSelector(m map[string]any) labels.Selector {
	if len(m) == 0 {
		return nil
	}
	set := make(labels.Set, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		set[k] = s
	}
	sel, err := labels.ValidatedSelectorFromSet(set)
	if err != nil {
		return nil
	}
	return sel
}

// labelSelector reads a metav1.LabelSelector; {} selects everything, an invalid one nothing.
// matchLabels or matchExpressions of another shape (a string, a map where a list belongs)
// make it invalid, not empty: skipped, they made it {}, which selects everything.
func labelSelector(m map[string]any) labels.Selector {
	ls := &metav1.LabelSelector{}
	ml, ok := m["matchLabels"].(map[string]any)
	if !ok && m["matchLabels"] != nil {
		return nil
	}
	exprs, ok := m["matchExpressions"].([]any)
	if !ok && m["matchExpressions"] != nil {
		return nil
	}
	if ml != nil {
		ls.MatchLabels = make(map[string]string, len(ml))
		for k, v := range ml {
			s, ok := v.(string)
			if !ok {
				return nil
			}
			ls.MatchLabels[k] = s
		}
	}
	for _, x := range exprs {
		e, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		key, _ := e["key"].(string)
		op, _ := e["operator"].(string)
		req := metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOperator(op)}
		if vals, ok := e["values"].([]any); ok {
			for _, v := range vals {
				s, ok := v.(string)
				if !ok {
					return nil
				}
				req.Values = append(req.Values, s)
			}
		}
		ls.MatchExpressions = append(ls.MatchExpressions, req)
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil
	}
	return sel
}
