package main

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/bench/harness"
)

// compressionEstimate answers a question for the library, not for crcache: how small would
// the compact store's objects be if each were kept deflated with a preset dictionary shared
// by its informer (made of the first objects it lists)? It lists the seeded Pods as the
// compact store keeps them (JSON, managedFields cut), compresses each on its own with such
// a dictionary, and reports sizes and the time to inflate one. It measures no cache: the
// heap figure it prints is a projection (compressed bytes rounded up to Go's size classes,
// plus the compact store's measured per-object overhead besides the JSON).
func compressionEstimate(ctx context.Context, cfg *rest.Config, ns string, dictObjects int) (string, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	list, err := dyn.Resource(harness.PodsGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	if len(list.Items) <= dictObjects {
		return "", fmt.Errorf("%d pods: too few for a dictionary of %d", len(list.Items), dictObjects)
	}
	objs := make([][]byte, len(list.Items))
	for i := range list.Items {
		u := &list.Items[i]
		u.SetManagedFields(nil)
		if objs[i], err = json.Marshal(u.Object); err != nil {
			return "", err
		}
	}
	var dict []byte
	for _, o := range objs[:dictObjects] {
		dict = append(dict, o...)
	}
	if len(dict) > 32<<10 { // deflate's window
		dict = dict[len(dict)-32<<10:]
	}
	var plain, packed, rounded int
	var buf bytes.Buffer
	w, err := flate.NewWriterDict(&buf, flate.BestCompression, dict)
	if err != nil {
		return "", err
	}
	compressed := make([][]byte, 0, len(objs)-dictObjects)
	for _, o := range objs[dictObjects:] {
		buf.Reset()
		w.Reset(&buf)
		if _, err := w.Write(o); err != nil {
			return "", err
		}
		if err := w.Close(); err != nil {
			return "", err
		}
		c := bytes.Clone(buf.Bytes())
		compressed = append(compressed, c)
		plain += len(o)
		packed += len(c)
		rounded += sizeClass(len(c))
	}
	n := len(compressed)
	r := flate.NewReaderDict(bytes.NewReader(nil), dict)
	var out bytes.Buffer
	times := make([]time.Duration, 0, n)
	for _, c := range compressed {
		start := time.Now()
		if err := r.(flate.Resetter).Reset(bytes.NewReader(c), dict); err != nil {
			return "", err
		}
		out.Reset()
		if _, err := io.Copy(&out, r); err != nil {
			return "", err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	var b strings.Builder
	fmt.Fprintf(&b, "\nCompression estimate (a projection for the library, not a measured cache): %d Pods as the compact store keeps them, each deflated on its own with a %d-byte preset dictionary made of the first %d\n\n",
		n, len(dict), dictObjects)
	fmt.Fprintf(&b, "| JSON per object | deflated per object | ratio | deflated, rounded to Go size classes | inflate one object (median) |\n|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d B | %d B | %.3f | %d B | %s |\n", plain/n, packed/n, float64(packed)/float64(plain), rounded/n, times[n/2].Round(100*time.Nanosecond))
	return b.String(), nil
}

// sizeClass rounds an allocation up to the Go allocator's size class (those up to 32 KB).
func sizeClass(n int) int {
	for _, c := range goSizeClasses {
		if n <= c {
			return c
		}
	}
	return (n + 8191) &^ 8191
}

var goSizeClasses = []int{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320,
	352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472,
	9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768,
}
