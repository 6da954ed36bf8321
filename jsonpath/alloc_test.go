package jsonpath

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEachDoesNotAllocate asserts the zero-allocation promise of Each for
// single-valued paths, and for the linear paths indexes typically use.
func TestEachDoesNotAllocate(t *testing.T) {
	raw, obj := fixture(t, "pod")
	n := 0
	count := func(v Value) bool { n += int(v.Kind()); return true }
	cases := []struct {
		expr   string
		single bool
	}{
		{`{.spec.nodeName}`, true},
		{`.spec.nodeName`, true},
		{`{.metadata.labels['app.kubernetes.io/name']}`, true},
		{`{.spec.containers[0].ports[0].containerPort}`, true},
		{`{.spec.containers[-1].name}`, true},
		{`{.status.conditions[-2].type}`, true},
		{`{.metadata}`, true},
		{`{.metadata.missing.deeper}`, true},
		{`{@}`, true},
		{`{"literal"}`, true},
		{`{.spec.containers[*].image}`, false},
		{`{.status.conditions[?(@.type=="Ready")].status}`, false},
		{`{.status.containerStatuses[?(@.restartCount>0)].name}`, false},
		{`{.status.conditions[?(@.lastProbeTime)].type}`, false},
		{`{.spec.containers[1:].name}`, false},
		{`{.spec.containers[*].ports[*].containerPort}`, false},
		{`{.status.conditions[?(@.type!=@.status)].type}`, false},
		{`{.spec.containers[?(@.ports[*].containerPort==8080)].name}`, false},
		{`{.spec.containers[0:2].ports[?(@.containerPort>1000)].name}`, false},
		{`{.spec.nodeName,.metadata.name}`, false},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			p, err := Compile(c.expr)
			require.NoError(t, err)
			assert.Equal(t, c.single, p.SingleValued())
			allocs := testing.AllocsPerRun(200, func() {
				if err := p.Each(obj, count); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "Each")
			g := generic(p) // the specialized paths must not hide allocations
			allocs = testing.AllocsPerRun(200, func() {
				if err := g.Each(obj, count); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "Each, generic evaluator")
			buf := make([]Value, 0, 8)
			allocs = testing.AllocsPerRun(200, func() {
				var err error
				if buf, err = p.AppendEval(buf[:0], obj); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "AppendEval")
			if c.single {
				// Converted to an interface once: the conversion allocates
				// a slice header, the evaluation nothing.
				var doc any = JSON(raw)
				allocs = testing.AllocsPerRun(200, func() {
					if err := p.Each(doc, count); err != nil {
						t.Fatal(err)
					}
				})
				assert.Zero(t, allocs, "Each on JSON")
			}
		})
	}
}

func TestAppendTextDoesNotAllocate(t *testing.T) {
	vals := []Value{intValue(-1234567), floatValue(1.5), boolValue(true), nullValue(), stringValue("name")}
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(200, func() {
		for _, v := range vals {
			buf, _ = v.AppendText(buf[:0])
		}
		_ = stringValue("x").String()
	})
	assert.Zero(t, allocs)
}
