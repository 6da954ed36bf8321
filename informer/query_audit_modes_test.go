package informer

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/jsondecode"
	"github.com/kindex/kindex/jsonpath"
)

// TestAuditIndexValuesAgreeAcrossModes indexes objects whose fields are numbers in many
// spellings, booleans, null, empty values and escaped strings in every way a cache holds
// them, and checks that each way gives the same values.
func TestAuditIndexValuesAgreeAcrossModes(t *testing.T) {
	fields := []string{
		`0`, `-0`, `0.0`, `-0.0`, `0e0`, `-0e5`, `1`, `1.0`, `1.00`, `1e0`, `1E+0`, `10e-1`, `1e3`, `1E3`, `1e+3`, `1000.000`,
		`0.1`, `0.10`, `1e-7`, `1.5e300`, `5e-324`, `2.5e-324`, `1e-400`, `9007199254740992`, `9007199254740993`,
		`9007199254740993.0`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
		`18446744073709551615`, `18446744073709551616`, `123456789012345678901234567890`, `1e21`, `1e20`, `123456789.125`,
		`100000000000000000000`, `1e+21`, `0.000001`, `0.0000001`, `true`, `false`, `null`, `""`, `"\u00e9"`, `"\/"`,
		`"a\u0000b"`, `"\ud83d\ude00"`, `{}`, `[]`, `[1,1.0,1]`, `[null]`, `[[]]`, `{"a":null}`, `"1.0"`, `" "`,
	}
	dec := func(opts compact.Options) func([]byte) (any, error) {
		d, err := compact.NewDecoder(opts)
		if err != nil {
			t.Fatal(err)
		}
		return func(data []byte) (any, error) { return d.DecodeObject(data) }
	}
	modes := map[string]func([]byte) (any, error){
		"kindex": func(data []byte) (any, error) {
			m, err := jsondecode.Object(data)
			return &unstructured.Unstructured{Object: m}, err
		},
		"client-go": func(data []byte) (any, error) { return runtime.Decode(unstructured.UnstructuredJSONScheme, data) },
		"compact":   dec(compact.Options{Spans: true}),
		"nospans":   dec(compact.Options{}),
		"projected": dec(compact.Options{Spans: true, Projection: []string{"{.spec.n}", "{.spec.n[*]}", "{.metadata.annotations.n}"}}),
	}
	paths := []string{"{.spec.n}", "{.spec.n[*]}", "{.spec.n[*][*]}", "{.spec.n.a}"}
	for _, f := range fields {
		data := []byte(fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"W","metadata":{"name":"x","namespace":"a"},"spec":{"n":%s}}`, f))
		if !json.Valid(data) {
			t.Fatalf("%s: not JSON", f)
		}
		for _, expr := range paths {
			fn := indexfuncs.FromPath(jsonpath.MustCompile(expr))
			var first []string
			firstMode := ""
			for _, name := range []string{"kindex", "client-go", "compact", "nospans", "projected"} {
				if name == "projected" && expr != "{.spec.n}" && expr != "{.spec.n[*]}" {
					continue
				}
				item, err := modes[name](data)
				if err != nil {
					t.Logf("%s %s: decode: %v", name, f, err)
					continue
				}
				vals, err := fn(item)
				if err != nil {
					t.Errorf("%s %s %s: %v", name, f, expr, err)
					continue
				}
				if firstMode == "" {
					first, firstMode = vals, name
				} else if !slices.Equal(vals, first) {
					t.Errorf("%s on %s: %s gives %q, %s %q", expr, f, name, vals, firstMode, first)
				}
			}
		}
	}
}
