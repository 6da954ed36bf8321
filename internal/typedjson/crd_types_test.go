package typedjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Types written as operators write their CRDs' Go types (kubebuilder's layout and
// markers), decoded with Unmarshal and compared with sigs.k8s.io/json.

type crdPhase string

type crdColor string

// UnmarshalJSON with a value receiver: in the method set of *crdValueMethod, which is
// what both decoders call.
type crdValueMethod struct{ Got string }

func (v crdValueMethod) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad value method")
	}
	return nil
}

// crdLower lower-cases a string through UnmarshalText (pointer receiver).
type crdLower string

func (l *crdLower) UnmarshalText(b []byte) error {
	*l = crdLower(strings.ToLower(string(b)))
	return nil
}

// crdUpper has UnmarshalText with a value receiver on a map type, which can only record
// into the map it already holds.
type crdUpper map[string]string

func (u crdUpper) UnmarshalText(b []byte) error {
	if u != nil {
		u["text"] = string(b)
	}
	return nil
}

// crdTimeout embeds metav1.Duration: its UnmarshalJSON is promoted, so the whole struct
// is decoded by it and Extra is never set from JSON.
type crdTimeout struct {
	metav1.Duration `json:",inline"`
	Extra           string `json:"extra,omitempty"`
}

type CrdCommon struct {
	Owner string   `json:"owner,omitempty"`
	Phase crdPhase `json:"phase,omitempty"`
	Deep  string   `json:"deep,omitempty"`
}

type CrdExtra struct {
	Note string `json:"note,omitempty"`
	Deep string `json:"deep,omitempty"`
}

type crdHidden struct {
	Hidden string `json:"hidden,omitempty"`
}

type crdSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

type crdTarget struct {
	Name      string             `json:"name"`
	Port      intstr.IntOrString `json:"port,omitempty"`
	Weight    *int32             `json:"weight,omitempty"`
	Selector  *crdSelector       `json:"selector,omitempty"`
	Protocols []corev1.Protocol  `json:"protocols,omitempty"`
}

type crdSpec struct {
	CrdCommon  `json:",inline"`
	*CrdExtra  `json:",inline"`
	crdHidden  `json:",inline"`
	Replicas   *int32                        `json:"replicas,omitempty"`
	MaxSurge   *intstr.IntOrString           `json:"maxSurge,omitempty"`
	Paused     *bool                         `json:"paused,omitempty"`
	Enabled    bool                          `json:"enabled"`
	Small      int32                         `json:"small,omitempty"`
	Big        int64                         `json:"big,omitempty"`
	UBig       uint64                        `json:"ubig,omitempty"`
	Ratio      json.Number                   `json:"ratio,omitempty"`
	Score      float64                       `json:"score,omitempty"`
	F32        float32                       `json:"f32,omitempty"`
	PScore     *float64                      `json:"pscore,omitempty"`
	Color      crdColor                      `json:"color,omitempty"`
	Colors     []crdColor                    `json:"colors,omitempty"`
	ColorMap   map[crdColor]int32            `json:"colorMap,omitempty"`
	Interval   metav1.Duration               `json:"interval,omitempty"`
	PInterval  *metav1.Duration              `json:"pinterval,omitempty"`
	Deadline   *metav1.Time                  `json:"deadline,omitempty"`
	Start      metav1.Time                   `json:"start,omitempty"`
	Raw        runtime.RawExtension          `json:"raw,omitempty"`
	PRaw       *runtime.RawExtension         `json:"praw,omitempty"`
	JSON       apiextensionsv1.JSON          `json:"json,omitempty"`
	PJSON      *apiextensionsv1.JSON         `json:"pjson,omitempty"`
	JSONs      []apiextensionsv1.JSON        `json:"jsons,omitempty"`
	Size       resource.Quantity             `json:"size,omitempty"`
	PSize      *resource.Quantity            `json:"psize,omitempty"`
	Limits     corev1.ResourceList           `json:"limits,omitempty"`
	Resources  corev1.ResourceRequirements   `json:"resources,omitempty"`
	Labels     map[string]string             `json:"labels,omitempty"`
	Secrets    []corev1.LocalObjectReference `json:"secrets,omitempty"`
	Targets    []crdTarget                   `json:"targets,omitempty"`
	PTargets   []*crdTarget                  `json:"ptargets,omitempty"`
	TargetMap  map[string]*crdTarget         `json:"targetMap,omitempty"`
	Data       []byte                        `json:"data,omitempty"`
	Digest     [4]byte                       `json:"digest,omitempty"`
	Triple     [3]int                        `json:"triple,omitempty"`
	Any        interface{}                   `json:"any,omitempty"`
	Config     map[string]interface{}        `json:"config,omitempty"`
	Blobs      []map[string]interface{}      `json:"blobs,omitempty"`
	Value      crdValueMethod                `json:"value,omitempty"`
	PValue     *crdValueMethod               `json:"pvalue,omitempty"`
	Lower      crdLower                      `json:"lower,omitempty"`
	PLower     *crdLower                     `json:"plower,omitempty"`
	LowerKeys  map[crdLower]string           `json:"lowerKeys,omitempty"`
	Upper      crdUpper                      `json:"upper,omitempty"`
	Timeout    crdTimeout                    `json:"timeout,omitempty"`
	PTimeout   *crdTimeout                   `json:"ptimeout,omitempty"`
	Inline     CrdExtra                      `json:",inline"`
	Quoted     int64                         `json:"quoted,string,omitempty"`
	Env        []corev1.EnvVar               `json:"env,omitempty"`
	Template   *corev1.PodTemplateSpec       `json:"template,omitempty"`
	Deep       string                        `json:"deep,omitempty"`
	Tolerating []corev1.Toleration           `json:"tolerating,omitempty"`
}

type crdStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	LastRun            *metav1.MicroTime  `json:"lastRun,omitempty"`
	Phase              crdPhase           `json:"phase,omitempty"`
	Ready              *bool              `json:"ready,omitempty"`
}

type crdWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              crdSpec    `json:"spec,omitempty"`
	Status            *crdStatus `json:"status,omitempty"`
}

type crdWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []crdWidget `json:"items"`
}

// crdBlob is a CRD whose spec is x-kubernetes-preserve-unknown-fields.
type crdBlob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]interface{} `json:"spec,omitempty"`
	Status            runtime.RawExtension   `json:"status,omitempty"`
}

// crdSpecInputs are spec values; each is decoded in a whole object, alone and in a list.
var crdSpecInputs = []string{
	`{}`, `null`, `{"enabled":true}`,
	// The inline embedded structs: promoted fields, the conflicting "deep" (the spec's own wins),
	// the unexported embedded one, a pointer allocated when one of its fields is set.
	`{"owner":"me","phase":"Ready","note":"n","hidden":"h","deep":"d","Inline":{"note":"x"},"CrdCommon":{"owner":"no"}}`,
	`{"note":null}`, `{"note":"a","CrdExtra":{"note":"b"}}`,
	// Pointers and numbers.
	`{"replicas":0,"paused":false,"maxSurge":"25%","small":2147483647,"big":9223372036854775807,"ubig":18446744073709551615}`,
	`{"replicas":null,"paused":null,"maxSurge":null,"pscore":null}`,
	`{"small":2147483648}`, `{"small":-2147483649}`, `{"big":9223372036854775808}`, `{"big":-9223372036854775808}`,
	`{"ubig":18446744073709551616}`, `{"ubig":-1}`, `{"small":1.0}`, `{"small":1e3}`, `{"big":1E2}`, `{"small":-0}`,
	`{"ratio":1.5e-300,"score":1.7976931348623157e308,"f32":3.4028235e38,"pscore":-0.0}`,
	`{"score":1e309}`, `{"f32":3.5e38}`, `{"f32":1e-50}`, `{"ratio":"1.5"}`, `{"ratio":"x"}`, `{"ratio":true}`, `{"ratio":null}`,
	`{"maxSurge":2147483648}`, `{"maxSurge":1.5}`, `{"maxSurge":-0}`, `{"maxSurge":"\u0032\u0035%"}`, `{"maxSurge":{}}`,
	`{"quoted":"9223372036854775807"}`, `{"quoted":"-1e2"}`, `{"quoted":12}`, `{"quoted":"null"}`, `{"quoted":null}`,
	// Enums and their maps.
	`{"color":"red","colors":["red",null,"blue"],"colorMap":{"red":1,"\u0062lue":2}}`, `{"colors":[]}`, `{"colorMap":{}}`,
	// Durations, times, micro-times.
	`{"interval":"1m30s","pinterval":"0s","deadline":"2026-11-30T12:00:00Z","start":"2026-11-30T12:00:00.5+02:00"}`,
	`{"interval":"1x"}`, `{"interval":null,"pinterval":null,"deadline":null,"start":null}`, `{"deadline":""}`,
	`{"deadline":"2026-02-29T00:00:00Z"}`, `{"deadline":"0001-01-01T00:00:00Z"}`, `{"deadline":"9999-12-31T23:59:59Z"}`,
	`{"deadline":"2026-11-30T12:00:00z"}`, `{"deadline":"2026-11-30t12:00:00Z"}`, `{"deadline":"2026-11-30T24:00:00Z"}`,
	`{"start":"2026-11-30T12:00:60Z"}`, `{"start":"\u0032026-11-30T12:00:00Z"}`, `{"start":1}`,
	// RawExtension and apiextensions JSON.
	`{"raw":{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"\u00e9"}},"praw":[1,2],"json":{"x":[null]},"pjson":"s","jsons":[1,"a",null,{},[]]}`,
	`{"raw":null,"praw":null,"json":null,"pjson":null,"jsons":null}`, `{"raw":"x","json":12345678901234567890}`,
	// Quantities and resources.
	`{"size":"1.5Gi","psize":"100m","limits":{"cpu":"2","memory":"1e3","nvidia.com/gpu":"1"}}`,
	`{"size":1.5,"psize":100}`, `{"size":" 1 "}`, `{"size":"1Q"}`, `{"size":null,"psize":null,"limits":null}`,
	`{"size":"9223372036854775807","psize":"99999999999999999999999999Ei"}`, `{"size":"\u0031"}`,
	`{"resources":{"limits":{"cpu":"500m"},"requests":{"memory":"64Mi"},"claims":[{"name":"gpu"}]}}`,
	// Maps, lists, references.
	`{"labels":{"a":"b","":"","\u00e9":"\ud83d\ude00"},"secrets":[{"name":"s"},{},{"name":null}]}`,
	`{"labels":{},"secrets":[]}`, `{"labels":{"a":null}}`, `{"labels":{"a":1}}`,
	`{"targets":[{"name":"t","port":8080,"weight":5,"selector":{"matchLabels":{"x":"y"}},"protocols":["TCP","UDP"]}],"ptargets":[null,{"name":"p"}],"targetMap":{"a":null,"b":{"name":"b"}}}`,
	// Bytes and arrays.
	`{"data":"aGVsbG8=","digest":[1,2,3,4,5],"triple":[1]}`, `{"data":"aGVsbG8","digest":[256]}`, `{"data":null,"digest":null,"triple":[]}`,
	`{"data":[1,2]}`, `{"digest":"AQID"}`, `{"data":""}`,
	// interface{} and preserved-unknown blobs.
	`{"any":9223372036854775807,"config":{"n":9223372036854775808,"f":1.0,"e":1e2,"neg":-0,"s":"\u0000","l":[],"o":{}},"blobs":[{},null,{"a":[{"b":null}]}]}`,
	`{"any":null,"config":null,"blobs":[]}`, `{"any":-9223372036854775809}`, `{"any":[1,2.5,"x",true,null]}`,
	// Methods.
	`{"value":"x","pvalue":"y","lower":"ABC","plower":"DeF","lowerKeys":{"KEY":"v"},"upper":"text"}`,
	`{"value":null,"pvalue":null,"lower":null,"plower":null}`, `{"value":"bad"}`, `{"pvalue":"bad"}`,
	`{"lower":1}`, `{"lower":"\u0041"}`, `{"upper":{"a":"b"}}`, `{"upper":null}`,
	`{"timeout":"5s"}`, `{"timeout":{"duration":"5s","extra":"e"}}`, `{"ptimeout":"1h"}`, `{"ptimeout":null}`, `{"timeout":null}`,
	// Nested core types.
	`{"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}}`,
	`{"tolerating":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":9223372036854775807}]}`,
	// Keys unknown to the Go type, in other cases, escaped.
	`{"Replicas":3,"REPLICAS":4,"replicas":5,"unknown":{"deep":[1,{"x":null}]},"rep\u006cicas":6}`,
	`{"Enabled":true,"ENABLED":true}`, `{"replicas":1,"replicas":2}`, `{"labels":{"a":"1"},"labels":{"b":"2"}}`,
	`{"targets":[{"name":"a","weight":1}],"targets":[{"name":"b"}]}`, `{"triple":[1,2,3],"triple":[4]}`,
	`{"owner":1}`, `{"replicas":"1"}`, `{"paused":"true"}`, `{"enabled":null}`, `{"labels":[]}`, `{"secrets":{}}`,
}

var crdStatusInputs = []string{
	`null`, `{}`,
	`{"observedGeneration":9223372036854775807,"conditions":[{"type":"Ready","status":"True","observedGeneration":3,"lastTransitionTime":"2026-11-30T12:00:00Z","reason":"R","message":"m\n\"q\""}],"lastRun":"2026-11-30T12:00:00.123456Z","phase":"Done","ready":true}`,
	`{"conditions":[],"lastRun":null,"ready":null}`, `{"conditions":[{"lastTransitionTime":null}]}`, `{"lastRun":"2026-11-30T12:00:00Z"}`,
	`{"conditions":[{"lastTransitionTime":"2026-11-30T12:00:00.999999999Z"}]}`, `{"lastRun":"2026-11-30T12:00:00.1234567Z"}`,
}

func crdObjects() []string {
	var objs []string
	meta := `"apiVersion":"example.kindex.dev/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"u","resourceVersion":"12","generation":2,"creationTimestamp":"2026-11-30T12:00:00Z","labels":{"a":"b"},"annotations":{"x":"\u003cy\u003e"},"finalizers":["f"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"cu","controller":true}],"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"v1","time":"2026-11-30T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{}}}}]}`
	for _, spec := range crdSpecInputs {
		objs = append(objs, `{`+meta+`,"spec":`+spec+`}`)
	}
	for _, status := range crdStatusInputs {
		objs = append(objs, `{`+meta+`,"spec":{},"status":`+status+`}`)
	}
	objs = append(objs,
		`{"metadata":null,"spec":null,"status":null}`, `{"apiVersion":1}`, `{"metadata":{"deletionTimestamp":"2026-11-30T12:00:00Z","deletionGracePeriodSeconds":0}}`,
		`{"metadata":{"creationTimestamp":null,"labels":null}}`, `{"kind":"Widget","Kind":"x","TypeMeta":{"kind":"y"},"ObjectMeta":{"name":"z"}}`,
	)
	return objs
}

func TestCRDStyleTypes(t *testing.T) {
	objs := crdObjects()
	for _, obj := range objs {
		data := []byte(obj)
		requireSame(t, data, func() any { return new(crdWidget) })
		requireSame(t, data, func() any { return new(crdBlob) })
		requireSame(t, data, func() any { return new(metav1.PartialObjectMetadata) })
		requireSame(t, data, func() any { return new(map[string]any) })
		requireSame(t, []byte(`{"apiVersion":"example.kindex.dev/v1","kind":"WidgetList","metadata":{"resourceVersion":"5","continue":"c","remainingItemCount":1},"items":[`+obj+`,`+obj+`]}`),
			func() any { return new(crdWidgetList) })
	}
	// Whole objects decoded into values that already hold others.
	for i, obj := range objs {
		prev := []byte(objs[(i+7)%len(objs)])
		requireSame(t, []byte(obj), func() any {
			w := new(crdWidget)
			_ = json.Unmarshal(prev, w)
			return w
		})
	}
}

type crdHiddenPtr struct {
	HP string `json:"hp,omitempty"`
}

type CrdNamed string

// crdOdd holds the embeddings encoding/json treats specially: a pointer to an unexported
// struct (cannot be allocated), a named non-struct type (a field named by its type), an
// embedded struct with a name of its own, and a ",inline" tag on a field that is not
// embedded (named by its Go name).
type crdOdd struct {
	*crdHiddenPtr `json:",inline"`
	CrdNamed
	CrdCommon `json:"common"`
	Plain     CrdExtra `json:",inline"`
	PP        **int32  `json:"pp"`
	Iface     interface{}
}

var crdOddInputs = []string{
	`{}`, `{"hp":"x"}`, `{"hp":null}`, `{"CrdNamed":"n","common":{"owner":"o"},"owner":"no","Plain":{"note":"p"},"note":"no"}`,
	`{"pp":3}`, `{"pp":null}`, `{"Iface":{"a":1}}`, `{"crdNamed":"lower"}`,
}

func TestCRDStyleOddEmbeddings(t *testing.T) {
	for _, in := range crdOddInputs {
		requireSame(t, []byte(in), func() any { return new(crdOdd) })
		requireSame(t, []byte(in), func() any {
			n := int32(7)
			pn := &n
			s := "held"
			return &crdOdd{PP: &pn, Iface: &s, crdHiddenPtr: &crdHiddenPtr{HP: "old"}}
		})
	}
}

// crdTags accepts a list or one comma-separated string (UnmarshalJSON on a slice type).
type crdTags []string

func (t *crdTags) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = strings.Split(s, ",")
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*t = l
	return nil
}

// crdFlags is a map type with UnmarshalJSON.
type crdFlags map[string]bool

func (f *crdFlags) UnmarshalJSON(b []byte) error {
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*f = crdFlags{}
	for _, s := range l {
		(*f)[s] = true
	}
	return nil
}

// crdMethodsInContainers holds types with methods as map values, slice elements and
// array elements, where encoding/json decodes into a new element and stores it.
type crdMethodsInContainers struct {
	Tags      crdTags                      `json:"tags,omitempty"`
	PTags     *crdTags                     `json:"ptags,omitempty"`
	Flags     crdFlags                     `json:"flags,omitempty"`
	LowerMap  map[string]crdLower          `json:"lowerMap,omitempty"`
	LowerList []crdLower                   `json:"lowerList,omitempty"`
	LowerArr  [2]crdLower                  `json:"lowerArr,omitempty"`
	DurMap    map[string]metav1.Duration   `json:"durMap,omitempty"`
	TimeList  []metav1.Time                `json:"timeList,omitempty"`
	PTimeMap  map[string]*metav1.Time      `json:"ptimeMap,omitempty"`
	QtyMap    map[string]resource.Quantity `json:"qtyMap,omitempty"`
	IOSList   []intstr.IntOrString         `json:"iosList,omitempty"`
	ValueMap  map[string]crdValueMethod    `json:"valueMap,omitempty"`
	TagsMap   map[string]crdTags           `json:"tagsMap,omitempty"`
	Timeouts  []crdTimeout                 `json:"timeouts,omitempty"`
}

var crdContainerInputs = []string{
	`{}`, `{"tags":"a,b","ptags":["c"],"flags":["x","y"]}`, `{"tags":null,"ptags":null,"flags":null}`, `{"tags":1}`, `{"flags":{"a":true}}`,
	`{"lowerMap":{"a":"ABC","b":null},"lowerList":["X",null,"Y"],"lowerArr":["P","Q","R"]}`, `{"lowerList":[1]}`, `{"lowerMap":{"a":{}}}`,
	`{"durMap":{"a":"1s","b":null},"timeList":["2026-11-30T12:00:00Z",null,"2026-11-30T12:00:00+01:00"],"ptimeMap":{"a":null,"b":"2026-11-30T12:00:00Z"}}`,
	`{"durMap":{"a":"x"}}`, `{"timeList":["x"]}`, `{"qtyMap":{"a":"1Gi","b":2,"c":null},"iosList":[1,"a",null,2147483648]}`, `{"iosList":[1.5]}`,
	`{"valueMap":{"a":"x","b":null},"tagsMap":{"a":"x,y","b":["z"],"c":null},"timeouts":["1s",{"duration":"2s"},null]}`, `{"valueMap":{"a":"bad"}}`,
}

func TestCRDStyleMethodsInContainers(t *testing.T) {
	for _, in := range crdContainerInputs {
		requireSame(t, []byte(in), func() any { return new(crdMethodsInContainers) })
		requireSame(t, []byte(in), func() any {
			l := crdTags{"old"}
			return &crdMethodsInContainers{Tags: crdTags{"held"}, PTags: &l, LowerMap: map[string]crdLower{"a": "old", "z": "kept"},
				LowerList: []crdLower{"o1", "o2", "o3"}, TagsMap: map[string]crdTags{"a": {"old"}}, Flags: crdFlags{"old": true}}
		})
	}
}
