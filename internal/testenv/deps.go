package testenv

import (
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/stretchr/testify/require"
	_ "github.com/tidwall/gjson"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sync/singleflight"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/metadata"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/util/jsonpath"
	_ "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)
