package jsonpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	k8sjsonpath "k8s.io/client-go/util/jsonpath"
)

// clientGoCase compares kindex with client-go's util/jsonpath (with
// AllowMissingKeys(true), as kubectl and index functions use it) on one
// expression and fixture.
type clientGoCase struct {
	fixture string
	expr    string
	// clientGo is client-go's spelling when it differs from expr but
	// means the same (client-go splits ['a.b'] at the dot, so dotted keys
	// are written a\.b for it).
	clientGo string
	// unordered: client-go visits map members in random order, so the
	// outputs are compared as sorted space-separated words. With diff,
	// the difference is the order only: kindex's output must be want
	// exactly and client-go's the same words.
	unordered bool
	// diff, when set, says why kindex differs from client-go on purpose
	// (see doc.go); want is then kindex's output, and the test checks
	// that client-go really differs (other output, an error or a panic).
	diff string
	want string
}

var clientGoCases = []clientGoCase{
	// Pod: the expressions indexes and kubectl users write.
	{fixture: "pod", expr: `{.metadata.name}`},
	{fixture: "pod", expr: `{.metadata.namespace}/{.metadata.name}`},
	{fixture: "pod", expr: `{.spec.nodeName}`},
	{fixture: "pod", expr: `{.spec.containers[*].image}`},
	{fixture: "pod", expr: `{.spec.containers[*].name}`},
	{fixture: "pod", expr: `{.status.conditions[?(@.type=="Ready")].status}`},
	{fixture: "pod", expr: `{.status.conditions[?(@.type == 'Ready')].status}`},
	{fixture: "pod", expr: `{.metadata.labels.app\.kubernetes\.io/name}`},
	{fixture: "pod", expr: `{.metadata.labels['app.kubernetes.io/name']}`, clientGo: `{.metadata.labels.app\.kubernetes\.io/name}`},
	{fixture: "pod", expr: `{.metadata.labels.pod-template-hash}`},
	{fixture: "pod", expr: `{.metadata.labels}`},
	{fixture: "pod", expr: `{.metadata.ownerReferences[?(@.controller==true)].uid}`},
	{fixture: "pod", expr: `{.metadata.ownerReferences[0].kind}`},
	{fixture: "pod", expr: `{.metadata.managedFields[*].manager}`},
	{fixture: "pod", expr: `{.metadata.managedFields[?(@.subresource=="status")].manager}`},
	{fixture: "pod", expr: `{.spec.containers[0].ports[0].containerPort}`},
	{fixture: "pod", expr: `{.spec.containers[-1].name}`},
	{fixture: "pod", expr: `{.spec.containers[-3].name}`},
	{fixture: "pod", expr: `{.spec.containers[1:].name}`},
	{fixture: "pod", expr: `{.spec.containers[:2].name}`},
	{fixture: "pod", expr: `{.spec.containers[0:-1].name}`},
	{fixture: "pod", expr: `{.spec.containers[::2].name}`},
	{fixture: "pod", expr: `{.spec.containers[1:3:1].name}`},
	{fixture: "pod", expr: `{.spec.containers[0:0].name}`},
	{fixture: "pod", expr: `{.spec.containers[5:5].name}`},
	{fixture: "pod", expr: `{.spec.containers[0,2].name}`},
	{fixture: "pod", expr: `{.spec.containers[*].resources.limits.cpu}`},
	{fixture: "pod", expr: `{.spec.containers[0].resources}`},
	{fixture: "pod", expr: `{.spec.containers[*].env[?(@.name=="POD_NAME")].valueFrom.fieldRef.fieldPath}`},
	{fixture: "pod", expr: `{.spec.containers[?(@.name!="web")].name}`},
	{fixture: "pod", expr: `{.spec.tolerations[?(@.tolerationSeconds==300)].key}`},
	{fixture: "pod", expr: `{.spec.volumes[*].projected.sources[*].serviceAccountToken.expirationSeconds}`},
	{fixture: "pod", expr: `{.spec.priority} {.spec.enableServiceLinks} {.spec.terminationGracePeriodSeconds}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.ready==false)].name}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.restartCount>0)].name}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.restartCount>=1)].restartCount}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.restartCount<1)].name}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.restartCount<=1)].name}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.state.waiting)].name}`},
	{fixture: "pod", expr: `{.status.containerStatuses[?(@.state.waiting.reason=="CrashLoopBackOff")].name}`},
	{fixture: "pod", expr: `{.status.conditions[?(@.lastProbeTime)].type}`},
	{fixture: "pod", expr: `{.status.conditions[*].lastProbeTime}`},
	{fixture: "pod", expr: `{.status.podIPs[*].ip}`},
	{fixture: "pod", expr: `{.status.hostIPs}`},
	{fixture: "pod", expr: `{range .spec.containers[*]}{.name}={.image}{"\n"}{end}`},
	{fixture: "pod", expr: `{range .status.conditions[*]}{.type}:{.status} {end}`},
	{fixture: "pod", expr: `{range .status.containerStatuses[*]}{.name}{range .state.*}[{@}]{end};{end}`},
	{fixture: "pod", expr: `{@.kind} {$.apiVersion}`},
	{fixture: "pod", expr: `{.metadata.missing}`},
	{fixture: "pod", expr: `before-{.nope}-after`},
	{fixture: "pod", expr: `{.spec.containers[*].missing}`},
	{fixture: "pod", expr: `{..containerPort}`, unordered: true},
	{fixture: "pod", expr: `{..ip}`, unordered: true},

	// Deployment.
	{fixture: "deployment", expr: `{.spec.replicas}`},
	{fixture: "deployment", expr: `{.status.readyReplicas}/{.status.replicas}`},
	{fixture: "deployment", expr: `{.status.conditions[?(@.status=="False")].reason}`},
	{fixture: "deployment", expr: `{.spec.template.spec.containers[*].ports[*].containerPort}`},
	{fixture: "deployment", expr: `{.spec.template.spec.containers[?(@.ports[0].containerPort==8080)].name}`},
	{fixture: "deployment", expr: `{.spec.strategy.rollingUpdate.maxUnavailable} {.spec.strategy.rollingUpdate.maxSurge}`},
	{fixture: "deployment", expr: `{.spec.template.spec.tolerations}`},
	{fixture: "deployment", expr: `{.spec.template.spec.tolerations[*]}`},
	{fixture: "deployment", expr: `{.spec.selector.matchLabels}`},
	{fixture: "deployment", expr: `{.spec.template.spec.nodeSelector.kubernetes\.io/os}`},

	// Service: mixed int and string targetPorts, unions.
	{fixture: "service", expr: `{.spec.ports[?(@.protocol=="UDP")].port}`},
	{fixture: "service", expr: `{.spec.ports[*].targetPort}`},
	{fixture: "service", expr: `{.spec.ports[?(@.port>100)].name}`},
	{fixture: "service", expr: `{.spec.ports[?(@.nodePort)].name}`},
	{fixture: "service", expr: `{.spec.clusterIPs[1]}`},
	{fixture: "service", expr: `{.status.loadBalancer.ingress[*].ip}`},
	{fixture: "service", expr: `{.status.loadBalancer.ingress[*]['ip','hostname']}`},
	{fixture: "service", expr: `{.spec.ports[*]['name', 'port']}`},
	{fixture: "service", expr: `{.spec.ports[0,2]['port']}`},
	{fixture: "service", expr: `{.metadata.annotations}`},
	{fixture: "service", expr: `{.spec.ipFamilies[*]}`},

	// ConfigMap: strings that need escaping when printed inside JSON.
	{fixture: "configmap", expr: `{.data.LOG_LEVEL}`},
	{fixture: "configmap", expr: `[{.data.empty}]`},
	{fixture: "configmap", expr: `{.data.json}`},
	{fixture: "configmap", expr: `{.data.application\.yaml}`},
	{fixture: "configmap", expr: `{.data}`},
	{fixture: "configmap", expr: `{.data.unicode-ключ}`},
	{fixture: "configmap", expr: `{.binaryData.logo\.png} {.immutable}`},
	{fixture: "configmap", expr: `{@}`},

	// CustomResourceDefinition.
	{fixture: "crd", expr: `{.spec.versions[?(@.storage==true)].name}`},
	{fixture: "crd", expr: `{.spec.versions[?(@.served==true)].name}`},
	{fixture: "crd", expr: `{.spec.versions[?(@.deprecated)].name}`},
	{fixture: "crd", expr: `{.spec.names.shortNames[*]}`},
	{fixture: "crd", expr: `{.spec.names.shortNames}`},
	{fixture: "crd", expr: `{.spec.versions[*].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields}`},
	{fixture: "crd", expr: `{.spec.versions[1].additionalPrinterColumns[*].jsonPath}`},
	{fixture: "crd", expr: `{.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.size.maximum}`},
	{fixture: "crd", expr: `{.spec.versions[1].subresources.status}`},
	{fixture: "crd", expr: `{.status.storedVersions[-1]}`},
	{fixture: "crd", expr: `{range .status.conditions[*]}{.type}={.status}{"\n"}{end}`},

	// A custom resource with odd keys, numbers, nulls and nesting.
	{fixture: "widget", expr: `{.spec.size} {.spec.ratio} {.spec.neg} {.spec.zero}`},
	{fixture: "widget", expr: `{.spec.big}`},
	{fixture: "widget", expr: `{.spec.huge}`},
	{fixture: "widget", expr: `{.spec.tiny} {.spec.sci} {.spec.whole}`},
	{fixture: "widget", expr: `{.spec.million} {.spec.millionFloat}`},
	{fixture: "widget", expr: `{.spec.enabled} {.spec.disabled} {.spec.nothing}`},
	{fixture: "widget", expr: `{.spec.emptyList}{.spec.emptyMap}`},
	{fixture: "widget", expr: `{.spec.matrix}`},
	{fixture: "widget", expr: `{.spec.matrix[1][1][0]}`},
	{fixture: "widget", expr: `{.spec.matrix[*][*]}`},
	{fixture: "widget", expr: `{.spec.mixed[*]}`},
	{fixture: "widget", expr: `{.spec.mixed}`},
	{fixture: "widget", expr: `{.spec.html}`},
	{fixture: "widget", expr: `{.spec}`},
	{fixture: "widget", expr: `{.metadata.labels.example\.com/size}`},
	{fixture: "widget", expr: `{.metadata.labels.dotted\.key\.with\.dots}`},
	{fixture: "widget", expr: `{.metadata.labels.dash-key}`},
	{fixture: "widget", expr: `{.metadata.labels.ключ} {.metadata.labels.emoji🚀}`},
	{fixture: "widget", expr: `{.metadata.annotations.a/b\.c}`},
	{fixture: "widget", expr: `{.metadata.annotations.quote'key}`},
	{fixture: "widget", expr: `{.metadata.annotations.space\ key}`},
	{fixture: "widget", expr: `{.spec.weird\ keys.a\.b} {.spec.weird\ keys.c/d} {.spec.weird\ keys.e-f} {.spec.weird\ keys.1}`},
	{fixture: "widget", expr: `{.spec.weird\ keys.*}`, unordered: true},
	{fixture: "widget", expr: `{.spec.items[?(@.meta.ok==true)].name}`},
	{fixture: "widget", expr: `{.spec.items[?(@.tags)].name}`},
	{fixture: "widget", expr: `{.spec.items[*].meta.note}`},
	{fixture: "widget", expr: `{.spec.items[?(@.name>"b")].name}`},
	{fixture: "widget", expr: `{.spec.items[?(@.name<="b")].weight}`},
	{fixture: "widget", expr: `{.spec.items[-2:].name}`},
	{fixture: "widget", expr: `{.status.history[-1].phase}`},
	{fixture: "widget", expr: `{.spec.nothing.deeper}{.spec.size.x}{.spec.html.x}`},
	{fixture: "widget", expr: `{..phase}`, unordered: true},
	{fixture: "widget", expr: `{..name}`, unordered: true},
	{fixture: "widget", expr: `{.spec.items[*]['name','weight']}`},

	// A kubectl List.
	{fixture: "nodes", expr: `{range .items[*]}{.metadata.name}{"\t"}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`},
	{fixture: "nodes", expr: `{.items[?(@.spec.unschedulable==true)].metadata.name}`},
	{fixture: "nodes", expr: `{.items[*].status.addresses[?(@.type=="InternalIP")].address}`},
	{fixture: "nodes", expr: `{.items[?(@.metadata.labels.kubernetes\.io/hostname=="worker-1")].status.capacity.cpu}`},
	{fixture: "nodes", expr: `{.items[?(@.metadata.labels.node-role\.kubernetes\.io/control-plane)].metadata.name}`},
	{fixture: "nodes", expr: `{.items[?(@.status.capacity.cpu>"3")].metadata.name}`},
	{fixture: "nodes", expr: `{.items[*].metadata.labels.topology\.kubernetes\.io/zone}`},
	{fixture: "nodes", expr: `{range .items[*]}{range .spec.taints[*]}{.key}={.effect};{end}{end}`},
	{fixture: "nodes", expr: `{range .items[*]}[{$.metadata.name}]{end}`},
	{fixture: "nodes", expr: `{.items[*].status.capacity}`},
	{fixture: "nodes", expr: `{.items[0:2].metadata.name} {.items[-1:].metadata.name}`},
	{fixture: "nodes", expr: `{..kubeletVersion}`},
	{fixture: "nodes", expr: `{..type}`, unordered: true},
	{fixture: "nodes", expr: `{.kind}{"\n"}{'single'}{"\u00e9\x41"}`},
	{fixture: "nodes", expr: `plain text only`},
	{fixture: "nodes", expr: `{.items[*].status.conditions[?(@.status=="True")].type}`},

	// A quoted key with dots is read as client-go reads it (its parts) when the object
	// lacks the key itself: kubectl's union example.
	{fixture: "nodes", expr: `{.items[*]['metadata.name', 'status.capacity']}`},
	{fixture: "nodes", expr: `{.items[*]['metadata.name']}`},
	{fixture: "pod", expr: `{['metadata.name']}/{['spec.containers'][0]['name']}`},
	{fixture: "nodes", expr: `{.items[?(@['metadata.name']=="worker-1")].status.capacity}`},
	{fixture: "nodes", expr: `{range .items[*]}{['metadata.name']}{" "}{end}`},
	{fixture: "keys", expr: `{['a.b']} {.x['a.b']} {['x.a.b']} {.a['c']}`},

	// Deliberate differences (see "Differences from client-go" in doc.go).
	{fixture: "pod", expr: `{.metadata.labels['app.kubernetes.io/name']}`,
		diff: "a quoted key the object has is that key; client-go splits it at dots", want: "web-frontend"},
	{fixture: "widget", expr: `{.spec.items[*].tags[0]}`,
		diff: "an index out of range selects nothing; client-go fails", want: "x z"},
	{fixture: "widget", expr: `{.spec.items[3:1].name}`,
		diff: "a slice past its end selects nothing; client-go fails", want: ""},
	{fixture: "widget", expr: `{.spec.items[-10:].name}`,
		diff: "slice bounds are clamped; client-go fails", want: "a b c d"},
	{fixture: "widget", expr: `{.spec.items[?(@.weight>2)].name}`,
		diff: "numbers compare by value, int and float alike; client-go fails", want: "b c"},
	{fixture: "widget", expr: `{.spec.items[?(@.weight==2.5)].name}`,
		diff: "numbers compare by value, int and float alike; client-go fails", want: "b"},
	{fixture: "widget", expr: `{.spec.mixed[?(@==1)]}`,
		diff: "values of different types are not equal; client-go fails", want: "1"},
	{fixture: "service", expr: `{.spec.ports[?(@.targetPort=="https")].name}`,
		diff: "values of different types are not equal; client-go fails", want: "https"},
	{fixture: "widget", expr: `{.spec.items[*].tags[*]}`,
		diff: "client-go stops at an array a slice or [*] selects nothing from (items[1].tags is empty)", want: "x y z"},
	{fixture: "widget", expr: `{.spec.items[*].tags[1:]}`,
		diff: "client-go stops at an array a slice or [*] selects nothing from", want: "y"},
	{fixture: "widget", expr: `{.spec.items[?(@.tags[0])].name}`,
		diff: "client-go counts a failing index inside an existence filter as existing", want: "a d"},
	{fixture: "nodes", expr: `{.items[?(@.status.conditions[*].status=="True")].metadata.name}`,
		diff: "an operand with several values matches nothing; client-go fails", want: "control-plane"},
	{fixture: "nodes", expr: `{.items[?(@.status.addresses[0].type=="InternalIP")].metadata.name}`,
		diff: "an index out of range selects nothing; client-go fails", want: "worker-1 worker-2"},
	{fixture: "pod", expr: `{.metadata.labels[0]}`,
		diff: "indexing a map selects nothing; client-go fails", want: ""},
	{fixture: "pod", expr: `{.metadata.labels[*]}`,
		diff: "[*] selects map values, in key order; client-go fails", want: "frontend web-frontend-prod web-frontend 7d9c6b8f5d web"},
	{fixture: "pod", expr: `{.metadata.labels.*}`, unordered: true,
		diff: "map members are visited in key order; client-go's order is random", want: "frontend web-frontend-prod web-frontend 7d9c6b8f5d web"},
	{fixture: "pod", expr: `{.metadata.name.*}`,
		diff: "a wildcard on a string selects nothing; client-go yields its bytes", want: ""},
	{fixture: "widget", expr: `{.spec.nothing[?(@.x)]}`,
		diff: "filtering null selects nothing; client-go fails", want: ""},
	{fixture: "widget", expr: `{range .spec.mixed[*]}[{@}]{end}`,
		diff: "null prints as null in a range; client-go prints <no value>", want: `[1][two][3.5][true][null][{"six":6}][[7]]`},
	{fixture: "widget", expr: `{.status.history[*].*}`, unordered: true,
		diff: "map members are visited in key order; client-go's order is random", want: "1 Pending 2 Ready"},
	{fixture: "crd", expr: `{.spec.names..}`,
		diff: "descent visits objects and arrays only; client-go also yields non-empty strings",
		want: `{"categories":["all","example"],"kind":"Widget","listKind":"WidgetList","plural":"widgets","shortNames":["wd","wdg"],"singular":"widget"} ["all","example"] ["wd","wdg"]`},
	{fixture: "widget", expr: `{.spec.items[0].name..[0]}`,
		diff: "descent does not visit strings; client-go fails indexing them", want: ""},
	{fixture: "null", expr: `{@}`,
		diff: "null prints as null where it is the current node; client-go prints <no value>", want: "null"},
	{fixture: "null", expr: `{[0]}{[*]}{.a}`,
		diff: "an index of null selects nothing; client-go panics", want: ""},
	{fixture: "null", expr: `{range @}[{@}]{end}`,
		diff: "a range over null ranges over the null; client-go panics", want: "[null]"},
	{fixture: "keys", expr: `{['*']}`,
		diff: "a quoted * is a key; client-go reads it as a wildcard", want: "star"},
	{fixture: "keys", expr: `{.a['*']}`,
		diff: "a quoted * is a key, missing here; client-go reads it as a wildcard", want: ""},
	{fixture: "keys", expr: `{.a['c.*']}`,
		diff: "a part * of a dotted key is a key; client-go reads .c.*, a wildcard", want: ""},
	{fixture: "keys", expr: `{['a..b']}`,
		diff: "a key with an empty part is only that key; client-go reads .a..b, a descent", want: ""},
	{fixture: "keys", expr: `{['..b']}`,
		diff: "a key with an empty part is only that key; client-go reads ...b, a descent", want: ""},
	{fixture: "keys", expr: `{['.a']}`,
		diff: "a key with an empty part is only that key; client-go reads ..a, a descent", want: ""},
	{fixture: "keys", expr: `{['a\\b']}`,
		diff: "a backslash escapes the next character in a quoted key; client-go drops it (ab)", want: "backslash"},
	{fixture: "keys", expr: `{['a@']}`,
		diff: "a quoted key is a key; client-go reads .a@, where @ is skipped", want: ""},
	{fixture: "keys", expr: `{.x['a$']}`,
		diff: "a quoted key is a key; client-go reads .a$, where $ is skipped", want: ""},
	{fixture: "keys", expr: `{['a ']}`,
		diff: "a quoted key is a key; client-go reads .a followed by a space", want: ""},
}

// runClientGo executes expr with client-go, turning panics into errors.
func runClientGo(expr string, obj any) (out string, results [][]reflect.Value, err error) {
	if out, err = clientGoOutput(expr, obj, false); err != nil {
		return "", nil, err
	}
	defer recoverClientGo(&err)
	// A second parser: client-go's JSONPath mutates itself while executing.
	j := k8sjsonpath.New("test").AllowMissingKeys(true)
	_ = j.Parse(expr)
	results, err = j.FindResults(obj)
	return out, results, err
}

// clientGoOutput is client-go's Execute of expr on obj, with its JSON output
// (kubectl -o jsonpath-as-json) when asJSON, turning panics into errors.
func clientGoOutput(expr string, obj any, asJSON bool) (out string, err error) {
	defer recoverClientGo(&err)
	j := k8sjsonpath.New("test").AllowMissingKeys(true)
	j.EnableJSONOutput(asJSON)
	if err := j.Parse(expr); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := j.Execute(&b, obj); err != nil {
		return "", err
	}
	return b.String(), nil
}

func recoverClientGo(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("panic: %v", r)
	}
}

func sortedWords(s string) string {
	w := strings.Fields(s)
	slices.Sort(w)
	return strings.Join(w, " ")
}

func TestMatchesClientGo(t *testing.T) {
	for _, c := range clientGoCases {
		name := c.fixture + "/" + c.expr
		if c.diff != "" {
			name = "diff/" + name
		}
		t.Run(name, func(t *testing.T) {
			raw, obj := fixture(t, c.fixture)
			p, err := Compile(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.ExecuteString(obj)
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, err := p.ExecuteString(JSON(raw))
			if err != nil || gotJSON != got {
				t.Fatalf("ExecuteString on JSON = %q, %v; on the object = %q", gotJSON, err, got)
			}
			if _, err := evalAll(t, p, obj, raw); err != nil {
				t.Fatal(err)
			}
			cgExpr := c.expr
			if c.clientGo != "" {
				cgExpr = c.clientGo
			}
			cgOut, cgResults, cgErr := runClientGo(cgExpr, obj)

			if c.diff != "" {
				if got != c.want {
					t.Errorf("kindex = %q, want %q", got, c.want)
				}
				switch {
				case c.unordered:
					if cgErr != nil || sortedWords(cgOut) != sortedWords(c.want) {
						t.Errorf("client-go = %q, %v: want the same words in another order", cgOut, cgErr)
					}
				case cgErr == nil && cgOut == c.want:
					t.Errorf("client-go agrees (%q): the case is not a difference", cgOut)
				}
				t.Logf("differs on purpose (%s): client-go = %q, %v", c.diff, cgOut, cgErr)
				return
			}
			if cgErr != nil {
				t.Fatalf("client-go: %v", cgErr)
			}
			want := cgOut
			if c.unordered {
				got, want = sortedWords(got), sortedWords(want)
			}
			if got != want {
				t.Fatalf("Execute:\nkindex    %q\nclient-go %q", got, want)
			}
			if p.IsTemplate() {
				return
			}
			// Per value: kindex's Eval against client-go's FindResults.
			if len(cgResults) != 1 {
				t.Fatalf("client-go returned %d result groups", len(cgResults))
			}
			vs, _ := p.Eval(obj)
			var cg []Value
			for _, rv := range cgResults[0] {
				v, ok := valueOf(rv.Interface())
				if !ok {
					t.Fatalf("client-go result of type %T", rv.Interface())
				}
				cg = append(cg, v)
			}
			gotVals, wantVals := show(vs), show(cg)
			if c.unordered {
				slices.Sort(gotVals)
				slices.Sort(wantVals)
			}
			if !slices.Equal(gotVals, wantVals) {
				t.Fatalf("values:\nkindex    %q\nclient-go %q", gotVals, wantVals)
			}
		})
	}
}

// TestSyntaxDifferences documents what each library accepts that the
// other rejects (client-go reports some problems only when executing).
func TestSyntaxDifferences(t *testing.T) {
	_, obj := fixture(t, "widget")
	cases := []struct {
		expr      string
		kindexOK  bool
		clientGo  bool // client-go parses and executes without error
		rationale string
	}{
		{`{.spec.size,.spec.ratio}`, true, false, "kindex: a union of paths in one action"},
		{`.spec.size`, true, true, "kindex: a bare path, for index expressions; client-go prints it as text"},
		{`{..*}`, true, false, "kindex: descent followed by a wildcard"},
		{`{.metadata.labels["ключ"]}`, true, false, "kindex: double-quoted keys"},
		{`{.spec.items[ 0 ].name}`, true, false, "kindex: white space inside brackets"},
		{`{.metadata.annotations['quote\'key']}`, true, false, "kindex: escapes in quoted keys"},
		{`{}`, false, true, "client-go prints the whole object; kindex wants a path ({@})"},
		{`{.}`, false, true, "client-go yields nothing; kindex rejects the empty name"},
		{`{.spec .size}`, false, true, "client-go ignores spaces between segments"},
		{`{.spec.size 3}`, false, true, "client-go evaluates sequences of paths and literals"},
		{`{.spec$.size}`, false, true, "client-go ignores $ and @ anywhere"},
		{`{range .spec.items[*]}{.name}`, false, true, "kindex requires {end}"},
		{`{.spec.items[::0]}`, false, false, "kindex rejects a non-positive step when compiling"},
		{`{.spec.items[?(@.weight<>1)]}`, false, false, "kindex rejects unknown operators when compiling"},
		{`{hello}`, false, false, "identifiers other than range and end"},
		{`{end}`, false, false, "{end} without {range}"},
		{`{1.}`, false, true, "client-go reads a number with a trailing dot (1.) as a float"},
		{`{..-1}`, false, true, "client-go reads a descent followed by the literal -1, printed once per node"},
		{`{..+1.5}`, false, true, "client-go reads a descent followed by the literal 1.5"},
		{`{..'x'}`, false, true, "client-go reads a descent followed by the text x"},
		{`{.spec..-x}`, false, false, "a name after .. cannot start with a sign (client-go: not a number)"},
		{`{range .spec.emptyList[*]}{[0]}{end}`, true, false, "client-go panics indexing the item of a {range} that has no items"},
		{`{range .spec.missing}{[*]}{end}`, true, false, "client-go panics on [*] of the item of a {range} that has no items"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, err := Compile(c.expr)
			if (err == nil) != c.kindexOK {
				t.Errorf("kindex Compile error = %v, want ok=%t (%s)", err, c.kindexOK, c.rationale)
			}
			out, _, cgErr := runClientGo(c.expr, obj)
			if (cgErr == nil) != c.clientGo || (c.expr == ".spec.size" && out != c.expr) {
				t.Errorf("client-go = %q, %v, want ok=%t (%s)", out, cgErr, c.clientGo, c.rationale)
			}
		})
	}
}

// ExecuteJSON prints what client-go prints with EnableJSONOutput (kubectl -o
// jsonpath-as-json) for every case where the two agree on the values and
// client-go's order is fixed.
func TestExecuteJSONMatchesClientGo(t *testing.T) {
	for _, c := range clientGoCases {
		if c.diff != "" || c.unordered || c.clientGo != "" {
			continue
		}
		t.Run(c.fixture+"/"+c.expr, func(t *testing.T) {
			raw, obj := fixture(t, c.fixture)
			p, err := Compile(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			var got, gotJSON bytes.Buffer
			if err := p.ExecuteJSON(&got, obj); err != nil {
				t.Fatal(err)
			}
			if err := p.ExecuteJSON(&gotJSON, JSON(raw)); err != nil || gotJSON.String() != got.String() {
				t.Fatalf("ExecuteJSON on JSON = %q, %v; on the object = %q", gotJSON.String(), err, got.String())
			}
			want, err := clientGoOutput(c.expr, obj, true)
			if err != nil {
				t.Fatalf("client-go: %v", err)
			}
			if got.String() != want {
				t.Fatalf("ExecuteJSON:\nkindex    %q\nclient-go %q", got.String(), want)
			}
		})
	}
}

// indentedSize predicts json.Indent's output length, which the budget
// charges before indenting.
func TestIndentedSize(t *testing.T) {
	for _, s := range []string{`[]`, `[1]`, `[{}]`, `[[],{}]`, `["a,b:{[",{"k":[1,2,{"x":"\"]"}]}]`,
		`[{"a":{"b":{"c":[[[1]]]}}},"\\",null,true,1.5e+21]`} {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(s), "", "    "); err != nil {
			t.Fatal(err)
		}
		if got := indentedSize([]byte(s)); got != b.Len() {
			t.Errorf("indentedSize(%s) = %d, json.Indent wrote %d", s, got, b.Len())
		}
	}
}
