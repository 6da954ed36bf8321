package refs

import "testing"

func TestProbeRulePaths(t *testing.T) {
	for _, p := range []string{".spec.secretRef.name", "{ .spec.secretRef.name }", "{.spec.secretRef.name}{.spec.x}", "{$.spec.secretRef.name}", "spec.secretRef.name", "{.spec.refs[?(@.kind==\"Secret\")].name}", "{range .spec.refs[*]}{.name}{end}"} {
		_, err := compileRules([]Rule{{Name: "x", From: gr("example.com", "widgets"), Path: p, To: secrets}})
		t.Logf("%q: %v", p, err)
	}
	widgets := gr("example.com", "widgets")
	tg := newTestGraph(t, append(BuiltinRules(), Rule{Name: "w", From: widgets, Path: `{.spec.refs[?(@.kind=="Secret")].name}`, To: secrets, Namespace: NamespaceSame},
		Rule{Name: "w2", From: widgets, Path: `{ $.spec.one }`, To: secrets, Namespace: NamespaceSame}))
	tg.put(widgets, `{"metadata":{"name":"w","namespace":"ns"},"spec":{"one":"o","refs":[{"kind":"Secret","name":"a"},{"kind":"ConfigMap","name":"b"}]}}`)
	for _, s := range strs(tg.References(oref(widgets, "ns", "w"), 1)) {
		t.Log(s)
	}
}
