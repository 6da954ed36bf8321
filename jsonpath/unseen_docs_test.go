package jsonpath

// Objects for the differential probe: realistic resources nobody wrote
// tests for, and adversarial documents.
var probeDocs = map[string]string{
	"certificate": `{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"name":"web-tls","namespace":"prod","labels":{"app.kubernetes.io/managed-by":"Helm"},"annotations":{"cert-manager.io/issue-temporary-certificate":"true"},"generation":3},
"spec":{"secretName":"web-tls","duration":"2160h0m0s","renewBefore":"360h0m0s","dnsNames":["example.com","www.example.com","*.api.example.com"],"issuerRef":{"name":"letsencrypt","kind":"ClusterIssuer","group":"cert-manager.io"},"privateKey":{"algorithm":"ECDSA","size":256,"rotationPolicy":"Always"},"usages":["digital signature","key encipherment"]},
"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"Certificate is up to date and has not expired","observedGeneration":3,"lastTransitionTime":"2024-05-01T10:00:00Z"},{"type":"Issuing","status":"False","observedGeneration":2}],"notAfter":"2024-07-30T10:00:00Z","notBefore":"2024-05-01T10:00:00Z","renewalTime":"2024-07-15T10:00:00Z","revision":7}}`,

	"application": `{"apiVersion":"argoproj.io/v1alpha1","kind":"Application","metadata":{"name":"guestbook","namespace":"argocd","finalizers":["resources-finalizer.argocd.argoproj.io"]},
"spec":{"project":"default","source":{"repoURL":"https://github.com/argoproj/argocd-example-apps.git","targetRevision":"HEAD","path":"guestbook","helm":{"valueFiles":["values.yaml","values-prod.yaml"],"parameters":[{"name":"replicaCount","value":"3"},{"name":"image.tag","value":"v1.2.3","forceString":true}]}},"destination":{"server":"https://kubernetes.default.svc","namespace":"guestbook"},"syncPolicy":{"automated":{"prune":true,"selfHeal":false},"syncOptions":["CreateNamespace=true","PruneLast=true"],"retry":{"limit":5,"backoff":{"duration":"5s","factor":2,"maxDuration":"3m"}}}},
"status":{"sync":{"status":"Synced","revision":"53e28ff20cc530b9ada2173fbbd64d48338583ba"},"health":{"status":"Healthy"},"resources":[{"kind":"Service","name":"guestbook-ui","namespace":"guestbook","status":"Synced","health":{"status":"Healthy"},"version":"v1"},{"group":"apps","kind":"Deployment","name":"guestbook-ui","namespace":"guestbook","status":"OutOfSync","health":{"status":"Progressing","message":"Waiting for rollout"},"version":"v1"}],"history":[{"id":0,"revision":"abc","deployedAt":"2024-01-01T00:00:00Z"},{"id":1,"revision":"53e28ff","deployedAt":"2024-02-01T00:00:00Z"}],"operationState":null,"reconciledAt":"2024-02-02T00:00:00Z"}}`,

	"promrule": `{"apiVersion":"monitoring.coreos.com/v1","kind":"PrometheusRule","metadata":{"name":"k8s.rules","namespace":"monitoring","labels":{"prometheus":"k8s","role":"alert-rules"}},
"spec":{"groups":[{"name":"kubernetes-apps","interval":"30s","rules":[{"alert":"KubePodCrashLooping","expr":"max_over_time(kube_pod_container_status_waiting_reason{reason=\"CrashLoopBackOff\"}[5m]) >= 1","for":"15m","labels":{"severity":"warning"},"annotations":{"description":"Pod {{ $labels.namespace }}/{{ $labels.pod }} is crash looping.","runbook_url":"https://runbooks/kubepodcrashlooping"}},{"alert":"KubePodNotReady","expr":"sum by (namespace, pod) (kube_pod_status_phase{phase=~\"Pending|Unknown\"}) > 0","for":"15m","labels":{"severity":"critical"}}]},{"name":"node.rules","rules":[{"record":"node:node_num_cpu:sum","expr":"count by (cluster, node) (node_cpu_seconds_total{mode=\"idle\"})"},{"record":":node_memory_MemAvailable_bytes:sum","expr":"sum(node_memory_MemAvailable_bytes) by (cluster)"}]},{"name":"empty","rules":[]}]}}`,

	"node": `{"apiVersion":"v1","kind":"Node","metadata":{"name":"ip-10-0-1-23.ec2.internal","labels":{"beta.kubernetes.io/arch":"amd64","kubernetes.io/hostname":"ip-10-0-1-23","node.kubernetes.io/instance-type":"m5.large","topology.kubernetes.io/zone":"us-east-1a","node-role.kubernetes.io/worker":""},"annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},
"spec":{"providerID":"aws:///us-east-1a/i-0abc","podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24","fd00:1::/64"],"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"},{"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2024-01-01T00:00:00Z"}]},
"status":{"capacity":{"cpu":"2","ephemeral-storage":"83873772Ki","hugepages-1Gi":"0","memory":"7934464Ki","pods":"29"},"allocatable":{"cpu":"1930m","memory":"7244288Ki","pods":"29"},
"conditions":[{"type":"MemoryPressure","status":"False","reason":"KubeletHasSufficientMemory"},{"type":"DiskPressure","status":"False"},{"type":"PIDPressure","status":"False"},{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}],
"addresses":[{"type":"InternalIP","address":"10.0.1.23"},{"type":"Hostname","address":"ip-10-0-1-23.ec2.internal"},{"type":"InternalDNS","address":"ip-10-0-1-23.ec2.internal"}],
"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
"images":[{"names":["registry.k8s.io/kube-proxy@sha256:aaa","registry.k8s.io/kube-proxy:v1.29.0"],"sizeBytes":28557393},{"names":["docker.io/library/huge@sha256:bbb"],"sizeBytes":9007199254740993},{"names":["quay.io/x/y:latest"],"sizeBytes":1.5e9},{"sizeBytes":0}],
"nodeInfo":{"architecture":"amd64","bootID":"1d2c","containerRuntimeVersion":"containerd://1.7.11","kernelVersion":"5.10.205","kubeProxyVersion":"v1.29.0","kubeletVersion":"v1.29.0","operatingSystem":"linux"},
"volumesAttached":[],"volumesInUse":null}}`,

	"crdschema": `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Gadget","plural":"gadgets"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":0,"maximum":1000,"default":1},"ratio":{"type":"number","minimum":0.5,"maximum":1e3,"multipleOf":0.01,"default":1.0},"mode":{"type":"string","enum":["fast","slow","a.b","a'b","a\"b"],"default":null},"tags":{"type":"array","items":{"type":"string"},"maxItems":16},"x-kubernetes-int-or-string":true}},"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}},"additionalPrinterColumns":[{"name":"Ratio","type":"number","jsonPath":".spec.ratio","priority":1},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]}]}}`,

	"numbers": `{"ints":[0,1,-1,42,9007199254740993,9223372036854775807,-9223372036854775808],"bigs":[9223372036854775808,18446744073709551616,123456789012345678901234567890],
"floats":[0.1,1.5,-2.25,5.0,1.0,-0.0,1e21,1e20,1e-7,0.000001,1E2,2.5e-3,123456789.125,3.0e0],
"zero":0,"negzero":-0,"negzerof":-0.0,"one":1,"onef":1.0,"five":5,"fivef":5.0,"half":0.5,"str1":"1","strf":"1.5","strneg":"-1","t":true,"f":false,"n":null,
"pairs":[{"a":1,"b":1},{"a":1,"b":2},{"a":"x","b":"x"},{"a":"x","b":"y"},{"a":true,"b":true},{"a":null,"b":null},{"a":1.5,"b":1.5},{"a":2,"b":1},{"a":"b","b":"a"},{"a":1},{"b":1},{"a":[1],"b":[1]},{"a":{},"b":{}}],
"vals":[{"v":1},{"v":"1"},{"v":1.5},{"v":-1},{"v":0},{"v":true},{"v":false},{"v":null},{"v":"a"},{"v":"B"},{"v":""},{"v":"a'b"},{"v":"x\"y"},{"v":"a\\b"},{"v":[]},{"v":{}},{"v":1e21},{"v":9223372036854775807},{}]}`,

	"adversarial": `{"":"empty-key","*":"star-key","..":"dots-key","[0]":"bracket-key","a.b":"dotted","a":{"b":"nested-ab","":"a-empty","c":{"d":1}},"a\\b":"backslash","a'b":"quote","a\"b":"dquote"," sp ":"spaces","ключ":"cyrillic","é":"composed","e\u0301":"decomposed","$":"dollar","@":"at","{x}":"braces","1":"one-key","-1":"neg-key","true":"true-key","null":"null-key",
"list":[null,1,"two",[3,[4]],{"five":5},{},[],"",true,null],
"emptyList":[],"emptyMap":{},"emptyStr":"","nul":null,
"html":"<a href=\"x\">&amp;</a>","ctrl":"tab\there\nnl\u0001\u2028\u2029","uni":"\u00e9\ud83d\ude80","lone":"\ud800x","esc":"\/slash",
"nest":{"x":{"x":{"x":[{"x":1},{"y":2}]}},"name":"top"},
"items":[{"name":"a","tags":["t1"],"n":1},{"name":"b","tags":[],"n":2},{"name":"c","n":"3"},{"name":"d","tags":["t2","t3"],"n":2.5},{"tags":null}],
"m":{"k1":"v1","k2":"v2","k3":{"k4":"v4"}}}`,

	"list": `{"apiVersion":"v1","kind":"List","items":[
{"kind":"Pod","metadata":{"name":"p1","namespace":"a","labels":{"app":"x","tier":"fe"}},"spec":{"containers":[{"name":"c1","image":"nginx:1.25","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"}}},{"name":"sidecar","image":"envoy:1.2"}]},"status":{"phase":"Running","containerStatuses":[{"name":"c1","ready":true,"restartCount":0},{"name":"sidecar","ready":false,"restartCount":12,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}},
{"kind":"Pod","metadata":{"name":"p2","namespace":"b","labels":{"app":"y"}},"spec":{"containers":[{"name":"c1","image":"busybox","command":["sh","-c","sleep 3600"]}],"initContainers":[{"name":"init","image":"alpine"}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"p3","namespace":"a"},"spec":{"containers":[]},"status":{"phase":"Failed","containerStatuses":[]}}]}`,

	"homog": `{"ints":[3,-1,0,42,9007199254740993,-9223372036854775808,7],"strs":["b","a","","B","é","e\u0301","a'b","x\"y","a\\b","10","9"],"floats":[1.5,-0.0,0.1,2.0,1e21,-2.5e-3],"bools":[true,false,true],
"objs":[{"n":1,"m":1,"s":"a","t":"a","f":1.5,"g":0.5,"b":true,"c":true},{"n":2,"m":3,"s":"b","t":"c","f":-0.0,"g":0.0,"b":false,"c":true},{"n":-5,"m":-5,"s":"","t":"","f":1e21,"g":1e21,"b":false,"c":false},{"n":9223372036854775807,"m":9223372036854775806,"s":"x\"y","t":"a'b","f":0.1,"g":0.30000000000000004,"b":true,"c":false}],
"nested":[[1,2],[3],[],[[4]]],"maps":[{"a":{"x":1}},{"a":{"x":2}},{"a":{}}],"nulls":[null,null],"mixedTypes":[1,"1",1.5,true,null,[],{}]}`,
	"toplist":   `[{"a":1,"b":[1,2]},{"a":2,"b":[]},[3,[4]],"s",null,1.5,{"a":{"a":{"a":"deep"}}}]`,
	"topstring": `"just a string"`,
	"topnumber": `-12.5e1`,
	"topnull":   `null`,
}
