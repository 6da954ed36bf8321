package main

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Shell completion, as kubectl completes kubectl get: resource types, then names of that type
// (TYPE/NAME too), namespaces for -n, the kubeconfig's contexts, clusters and users, and the
// output formats. kubectl completes a plugin's arguments by running an executable named
// kubectl_complete-kquery with them; kquery is that executable when it runs under that name
// (a link to it), so that one binary does both:
//
//	ln -s kubectl-kquery "$(dirname "$(command -v kubectl-kquery)")/kubectl_complete-kquery"
//
// Types come from the discovery cache kubectl keeps (~/.kube/cache), names from a
// metadata-only LIST of what the namespace (or -A) holds. A completion that cannot reach the
// server offers nothing rather than an error: it must never hang a shell, hence a deadline.

// completionName is the name kubectl runs for a plugin's completions.
const completionName = "kubectl_complete-kquery"

// completionTimeout bounds the requests of one completion.
const completionTimeout = 5 * time.Second

// completionArgs turns the arguments of a run as completionName into cobra's completion
// request; other runs are left alone.
func completionArgs(argv0 string, args []string) []string {
	if strings.TrimSuffix(filepath.Base(argv0), ".exe") == completionName {
		return append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return args
}

// registerCompletions gives cmd (the root) and refs their argument and flag completions.
func (o *options) registerCompletions(cmd, refs *cobra.Command) {
	cmd.ValidArgsFunction = o.completeGetArgs
	refs.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return o.completeTypeSlashName(toComplete)
	}
	noFiles := cobra.ShellCompDirectiveNoFileComp
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return strings.Split(allowedFormats, ","), noFiles
	})
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return o.completeNames(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false, "", toComplete), noFiles
	})
	for flag, names := range map[string]func() []string{
		"context": func() []string {
			return o.kubeconfigNames(func(c *clientcmdapi.Config) []string { return slices.Sorted(maps.Keys(c.Contexts)) })
		},
		"cluster": func() []string {
			return o.kubeconfigNames(func(c *clientcmdapi.Config) []string { return slices.Sorted(maps.Keys(c.Clusters)) })
		},
		"user": func() []string {
			return o.kubeconfigNames(func(c *clientcmdapi.Config) []string { return slices.Sorted(maps.Keys(c.AuthInfos)) })
		},
	} {
		_ = cmd.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return withPrefix(names(), toComplete), noFiles
		})
	}
}

// completeGetArgs completes kquery's arguments: TYPE (or the last of TYPE,TYPE), TYPE/NAME,
// and after a single TYPE the names of its objects not typed yet.
func (o *options) completeGetArgs(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch {
	case strings.Contains(toComplete, "/"):
		return o.completeTypeSlashName(toComplete)
	case len(args) == 0 || strings.Contains(args[0], "/"):
		before, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			before, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, t := range withPrefix(o.resourceTypes(), last) {
			out = append(out, before+t)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	case strings.Contains(args[0], ","):
		return nil, cobra.ShellCompDirectiveNoFileComp // kubectl names no objects of several types
	}
	gvr, namespaced, ok := o.resolveForCompletion(args[0])
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := o.completeNames(gvr, namespaced, "", toComplete)
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args[1:], n) })
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeTypeSlashName completes TYPE/NAME: the types, each followed by a slash, until one
// is typed, then that type's names.
func (o *options) completeTypeSlashName(toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	typ, name, found := strings.Cut(toComplete, "/")
	if !found {
		var out []cobra.Completion
		for _, t := range withPrefix(o.resourceTypes(), typ) {
			out = append(out, t+"/")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	gvr, namespaced, ok := o.resolveForCompletion(typ)
	if !ok {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.completeNames(gvr, namespaced, typ+"/", name), cobra.ShellCompDirectiveNoFileComp
}

// resourceTypes lists what kubectl api-resources -o name lists: each resource that can be
// listed, by its plural, qualified by its group outside the core group, in the preferred
// version of its group.
func (o *options) resourceTypes() []string {
	dc, err := o.config.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	// A partial answer (one aggregated API down) still completes everything else.
	lists, _ := dc.ServerPreferredResources()
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// resolveForCompletion maps a TYPE as kubectl does (short names included) to its resource.
func (o *options) resolveForCompletion(typ string) (schema.GroupVersionResource, bool, bool) {
	mapper, err := o.config.ToRESTMapper()
	if err != nil {
		return schema.GroupVersionResource{}, false, false
	}
	var gvk schema.GroupVersionKind
	fully, gr := schema.ParseResourceArg(typ)
	if fully != nil {
		gvk, err = mapper.KindFor(*fully)
	}
	if fully == nil || err != nil {
		gvk, err = mapper.KindFor(gr.WithVersion(""))
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, false
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false, false
	}
	return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, true
}

// completeNames lists the names of gvr's objects that start with toComplete, in the
// namespace of the command line (every namespace with -A) for a namespaced resource, each
// after prefix.
func (o *options) completeNames(gvr schema.GroupVersionResource, namespaced bool, prefix, toComplete string) []string {
	cfg, err := restConfig(o)
	if err != nil {
		return nil
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	ns := ""
	if namespaced && !o.allNamespaces {
		if ns, _, err = o.config.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	l, err := client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	names = withPrefix(slices.Compact(names), toComplete)
	for i := range names {
		names[i] = prefix + names[i]
	}
	return names
}

// kubeconfigNames returns the sorted names of one of the kubeconfig's maps (pick).
func (o *options) kubeconfigNames(pick func(*clientcmdapi.Config) []string) []string {
	raw, err := o.config.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	return pick(&raw)
}

// withPrefix keeps the words that start with prefix.
func withPrefix(words []string, prefix string) []string {
	return slices.DeleteFunc(words, func(w string) bool { return !strings.HasPrefix(w, prefix) })
}
