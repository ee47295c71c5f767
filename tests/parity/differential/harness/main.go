// Command syncagent-diff-harness is syncagent's own differential-parity harness. It is compiled
// inside an extracted copy of upstream's deploy/operator module (never inside this repository),
// so it can drive upstream's admission defaulting and its DGD and DCD reconcilers (the DGD one
// runs the Component and Grove programs) on a controller-runtime fake client, and print every
// object those writes leave behind.
//
// Input (stdin): a JSON array of cases,
//
//	[{"id": "...", "namespace": "...", "gates": {"grove": true, "lws": true},
//	  "discoveryBackend": "kubernetes", "objects": [<DGD and side objects as JSON>]}]
//
// Output (stdout): JSON lines, one document per object written, in a stable order:
//
//	{"case": "...", "object": {"apiVersion": ..., "kind": ..., ...}}
//
// and one {"case": "...", "error": "..."} line for a case upstream could not reconcile.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"
	lwswebhooks "sigs.k8s.io/lws/pkg/webhooks"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/config/v1alpha1"
	nvidiacomv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1alpha1"
	nvidiacomv1beta1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1beta1"
	"github.com/ai-dynamo/dynamo/deploy/operator/internal/controller"
	commoncontroller "github.com/ai-dynamo/dynamo/deploy/operator/internal/controller_common"
	"github.com/ai-dynamo/dynamo/deploy/operator/internal/features"
	"github.com/ai-dynamo/dynamo/deploy/operator/internal/webhook/defaulting"
	grovev1alpha1 "github.com/ai-dynamo/grove/operator/api/core/v1alpha1"
)

// maxPasses bounds the reconcile rounds of a case: a round that writes nothing ends it earlier.
// Upstream converges in two or three (provider annotation, finalizer, then children).
const maxPasses = 8

// podIndex is the field index upstream's DGD controller registers on Pods in SetupWithManager;
// a fake client must know every index a List uses. No Pods exist here, so no values are needed.
const podIndex = ".metadata.dgdComponent"

type gates struct {
	Grove bool `json:"grove"`
	LWS   bool `json:"lws"`
}

type harnessCase struct {
	ID               string            `json:"id"`
	Namespace        string            `json:"namespace"`
	Gates            gates             `json:"gates"`
	DiscoveryBackend string            `json:"discoveryBackend"`
	OperatorConfig   json.RawMessage   `json:"operatorConfig,omitempty"`
	Objects          []json.RawMessage `json:"objects"`
}

type outputLine struct {
	Case   string         `json:"case"`
	Object map[string]any `json:"object,omitempty"`
	Error  string         `json:"error,omitempty"`
}

func main() {
	logf.SetLogger(logr.Discard())
	cases, err := readCases(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "syncagent-diff-harness: %v\n", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	for i := range cases {
		for _, line := range runCase(&cases[i]) {
			if err := encoder.Encode(line); err != nil {
				fmt.Fprintf(os.Stderr, "syncagent-diff-harness: write: %v\n", err)
				os.Exit(2)
			}
		}
	}
}

func readCases(r io.Reader) ([]harnessCase, error) {
	var cases []harnessCase
	decoder := json.NewDecoder(r)
	if err := decoder.Decode(&cases); err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	return cases, nil
}

// runCase isolates a case: a panic in upstream's code becomes that case's error line.
func runCase(c *harnessCase) (lines []outputLine) {
	defer func() {
		if recovered := recover(); recovered != nil {
			lines = []outputLine{{Case: c.ID, Error: fmt.Sprintf("panic: %v", recovered)}}
		}
	}()
	objects, err := reconcileCase(c)
	if err != nil {
		return []outputLine{{Case: c.ID, Error: err.Error()}}
	}
	for _, object := range objects {
		lines = append(lines, outputLine{Case: c.ID, Object: object})
	}
	return lines
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		networkingv1.AddToScheme,
		policyv1.AddToScheme,
		rbacv1.AddToScheme,
		resourcev1.AddToScheme,
		nvidiacomv1alpha1.AddToScheme,
		nvidiacomv1beta1.AddToScheme,
		grovev1alpha1.AddToScheme,
		lwsv1.AddToScheme,
		// Upstream lists Volcano PodGroups on multinode components to clean up legacy ones.
		volcanov1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return scheme
}

// operatorConfig is the case's configuration (the file syncagent render is given, decoded as
// upstream decodes it), run as upstream's own cluster tests run it: restricted to the case's
// namespace (so no cluster-wide RBAC manager is needed) and no GPU discovery.
func operatorConfig(c *harnessCase) (*configv1alpha1.OperatorConfiguration, error) {
	config := &configv1alpha1.OperatorConfiguration{}
	if len(c.OperatorConfig) > 0 {
		if err := strictDecode(c.OperatorConfig, config); err != nil {
			return nil, fmt.Errorf("operator configuration: %w", err)
		}
	}
	config.Namespace.Restricted = c.Namespace
	config.GPU.DiscoveryEnabled = ptr.To(false)
	// Required by upstream's config validation (the Helm chart sets it); without it a TRT-LLM
	// multinode pod mounts a volume with no name. syncagent references the same Secret name.
	config.MPI.SSHSecretName = "mpi-run-ssh-secret"
	config.MPI.SSHSecretNamespace = c.Namespace
	if c.DiscoveryBackend != "" {
		config.Discovery.Backend = configv1alpha1.DiscoveryBackend(c.DiscoveryBackend)
	}
	configv1alpha1.SetDefaultsOperatorConfiguration(config)
	return config, nil
}

// noSecrets answers upstream's image-pull secret lookup: the cases hold no registry secrets.
type noSecrets struct{}

func (noSecrets) GetSecrets(string, string) ([]string, error) { return nil, nil }

func reconcileCase(c *harnessCase) ([]map[string]any, error) {
	ctx := context.Background()
	scheme := newScheme()
	gate := features.Gates{Grove: c.Gates.Grove, LWS: c.Gates.LWS}
	inputs, dgds, err := decodeInputs(ctx, c, gate)
	if err != nil {
		return nil, err
	}
	writes := 0
	kubeClient := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(inputs...).
		WithStatusSubresource(
			&nvidiacomv1beta1.DynamoGraphDeployment{},
			&nvidiacomv1beta1.DynamoComponentDeployment{},
			&grovev1alpha1.PodCliqueSet{},
			&appsv1.Deployment{},
			&lwsv1.LeaderWorkerSet{},
		).
		WithRESTMapper(restMapper(scheme)).
		WithIndex(&corev1.Pod{}, podIndex, func(client.Object) []string { return nil }).
		WithInterceptorFuncs(admissionInterceptor(&writes)).
		Build()
	config, err := operatorConfig(c)
	if err != nil {
		return nil, err
	}
	runtimeConfig := &commoncontroller.RuntimeConfig{Gate: gate}
	dgdReconciler := &controller.DynamoGraphDeploymentReconciler{
		Client:                kubeClient,
		Recorder:              &events.FakeRecorder{},
		Config:                config,
		RuntimeConfig:         runtimeConfig,
		DockerSecretRetriever: noSecrets{},
	}
	dcdReconciler := &controller.DynamoComponentDeploymentReconciler{
		Client:                kubeClient,
		Recorder:              &events.FakeRecorder{},
		Config:                config,
		RuntimeConfig:         runtimeConfig,
		DockerSecretRetriever: noSecrets{},
	}
	for pass := 0; pass < maxPasses; pass++ {
		before := writes
		if err := reconcilePass(ctx, kubeClient, dgdReconciler, dcdReconciler, dgds); err != nil {
			return nil, err
		}
		if writes == before {
			break
		}
	}
	return dumpObjects(ctx, kubeClient, scheme)
}

// decodeInputs reads the case's objects: DGDs go through upstream's defaulting webhook as a
// CREATE would; everything else (ConfigMaps, Secrets...) is stored as given.
func decodeInputs(
	ctx context.Context,
	c *harnessCase,
	gate features.Gate,
) ([]client.Object, []types.NamespacedName, error) {
	var inputs []client.Object
	var dgds []types.NamespacedName
	for _, raw := range c.Objects {
		object := &unstructured.Unstructured{}
		if err := object.UnmarshalJSON(raw); err != nil {
			return nil, nil, fmt.Errorf("decode input: %w", err)
		}
		object.SetNamespace(c.Namespace)
		// The fake client assigns no UIDs; owner references need one.
		object.SetUID(objectUID(object.GetKind(), object.GetName()))
		if object.GetKind() != "DynamoGraphDeployment" {
			inputs = append(inputs, object)
			continue
		}
		dgd := &nvidiacomv1beta1.DynamoGraphDeployment{}
		if err := strictDecode(raw, dgd); err != nil {
			return nil, nil, fmt.Errorf("DynamoGraphDeployment %s: %w", object.GetName(), err)
		}
		dgd.Namespace, dgd.UID = c.Namespace, object.GetUID()
		dgd.Generation = 1
		if err := defaultGraph(ctx, dgd, gate); err != nil {
			return nil, nil, fmt.Errorf("DynamoGraphDeployment %s: defaulting: %w", dgd.Name, err)
		}
		inputs = append(inputs, dgd)
		dgds = append(dgds, client.ObjectKeyFromObject(dgd))
	}
	return inputs, dgds, nil
}

func objectUID(kind, name string) types.UID {
	return types.UID("uid-" + strings.ToLower(kind) + "-" + name)
}

// strictDecode refuses a field upstream's types do not have: a generated graph using one
// would compare a field upstream silently dropped.
func strictDecode(raw []byte, into any) error {
	decoder := json.NewDecoder(strings.NewReader(string(raw)))
	decoder.DisallowUnknownFields()
	return decoder.Decode(into)
}

func admissionContext(ctx context.Context, gvk schema.GroupVersionKind, gate features.Gate) context.Context {
	request := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create,
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
	}}
	return features.WithGate(admission.NewContextWithRequest(ctx, request), gate)
}

// operatorVersion is the version upstream's goldens at this commit were written by (they
// match 1.4.x). It is not arbitrary: upstream gates behaviour on the origin version it stamps
// (below 1.0.0 a vLLM multinode graph launches with Ray instead of multiprocessing).
const operatorVersion = "1.4.0"

// defaultGraph runs upstream's DGD defaulting webhook on a CREATE, which stamps the origin
// version (the stamp itself is a listed difference, D3).
func defaultGraph(ctx context.Context, dgd *nvidiacomv1beta1.DynamoGraphDeployment, gate features.Gate) error {
	if dgd.Annotations == nil {
		dgd.Annotations = map[string]string{}
	}
	ctx = admissionContext(ctx, nvidiacomv1beta1.DynamoGraphDeploymentGVK, gate)
	return defaulting.NewDGDDefaulter(operatorVersion).Default(ctx, dgd)
}

// admissionInterceptor counts every write (a pass that writes nothing has converged) and runs
// upstream's DCD defaulting webhook on each DCD the DGD controller creates, as the API server
// would.
func admissionInterceptor(writes *int) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			*writes++
			// The fake client assigns no UIDs, and owner references copy them.
			if obj.GetUID() == "" {
				gvk, err := apiutil.GVKForObject(obj, c.Scheme())
				if err != nil {
					return err
				}
				obj.SetUID(objectUID(gvk.Kind, obj.GetName()))
			}
			if dcd, ok := obj.(*nvidiacomv1beta1.DynamoComponentDeployment); ok {
				gvk := nvidiacomv1beta1.DynamoComponentDeploymentGVK
				if err := defaulting.NewDCDDefaulter().Default(admissionContext(ctx, gvk, features.Gates{}), dcd); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			*writes++
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			*writes++
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			*writes++
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			*writes++
			return c.Delete(ctx, obj, opts...)
		},
		// Grove's own controllers create the PodCliques the DGD controller scales; none run
		// here, so the scale subresource reads as its parent object does: not found.
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, _ client.Object, _ ...client.SubResourceGetOption) error {
			if sub != "scale" {
				return fmt.Errorf("unexpected subresource get %q", sub)
			}
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		},
	}
}

// clusterScoped are the kinds of the scheme that are not namespaced.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ComponentStatus": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "DeviceClass": true, "ResourceSlice": true,
	"IngressClass": true, "ClusterTopology": true,
}

// restMapper maps every kind of the scheme to its conventional plural resource, as the API
// server's discovery would; upstream resolves Grove's resources through it to scale them.
func restMapper(scheme *runtime.Scheme) meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper(scheme.PrioritizedVersionsAllGroups())
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		scope := meta.RESTScopeNamespace
		if clusterScoped[gvk.Kind] {
			scope = meta.RESTScopeRoot
		}
		mapper.AddSpecific(gvk, plural, singular, scope)
	}
	return mapper
}

// reconcilePass runs each graph's reconciler, then the DCD reconciler on every DCD that exists,
// as a manager would when their watches fire: in the order the DCDs were written (the fake
// client's resourceVersions count up), as their create events would arrive. Which DCD runs
// first decides, among other things, which one controls a model Service they share.
func reconcilePass(
	ctx context.Context,
	kubeClient client.Client,
	dgdReconciler *controller.DynamoGraphDeploymentReconciler,
	dcdReconciler *controller.DynamoComponentDeploymentReconciler,
	dgds []types.NamespacedName,
) error {
	for _, key := range dgds {
		if _, err := dgdReconciler.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			return fmt.Errorf("DynamoGraphDeployment %s: reconcile: %w", key.Name, err)
		}
	}
	dcds := &nvidiacomv1beta1.DynamoComponentDeploymentList{}
	if err := kubeClient.List(ctx, dcds); err != nil {
		return fmt.Errorf("list DynamoComponentDeployments: %w", err)
	}
	sort.SliceStable(dcds.Items, func(i, j int) bool {
		a, _ := strconv.Atoi(dcds.Items[i].ResourceVersion)
		b, _ := strconv.Atoi(dcds.Items[j].ResourceVersion)
		return a < b
	})
	for i := range dcds.Items {
		key := client.ObjectKeyFromObject(&dcds.Items[i])
		if _, err := dcdReconciler.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			return fmt.Errorf("DynamoComponentDeployment %s: reconcile: %w", key.Name, err)
		}
	}
	return nil
}

// dumpObjects lists every kind of the scheme (one version per group and kind: the fake client
// stores each object once) and returns the objects sorted by kind, namespace and name.
func dumpObjects(ctx context.Context, kubeClient client.Client, scheme *runtime.Scheme) ([]map[string]any, error) {
	var out []map[string]any
	for _, gvk := range listableKinds(scheme) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := kubeClient.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk, err)
		}
		for i := range list.Items {
			list.Items[i].SetManagedFields(nil)
			object, err := admitted(ctx, list.Items[i].Object)
			if err != nil {
				return nil, err
			}
			out = append(out, object)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return objectKey(out[i]) < objectKey(out[j]) })
	return out, nil
}

// admitted is an object as a real cluster stores it after the mutating webhooks of the
// workloads it installs: a LeaderWorkerSet passes the LWS manager's defaulting webhook (the
// test control plane the comparison runs on has the LWS CRDs, not that webhook).
func admitted(ctx context.Context, object map[string]any) (map[string]any, error) {
	u := unstructured.Unstructured{Object: object}
	if u.GroupVersionKind() != lwsv1.GroupVersion.WithKind("LeaderWorkerSet") {
		return object, nil
	}
	lws := &lwsv1.LeaderWorkerSet{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(object, lws); err != nil {
		return nil, fmt.Errorf("LeaderWorkerSet %s: %w", u.GetName(), err)
	}
	if err := (&lwswebhooks.LeaderWorkerSetWebhook{}).Default(ctx, lws); err != nil {
		return nil, fmt.Errorf("LeaderWorkerSet %s: defaulting: %w", u.GetName(), err)
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(lws)
	if err != nil {
		return nil, err
	}
	out["apiVersion"], out["kind"] = object["apiVersion"], object["kind"]
	return out, nil
}

func objectKey(object map[string]any) string {
	u := unstructured.Unstructured{Object: object}
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// listableKinds is every kind of the scheme that has a list kind, preferring the storage-like
// version of our own groups (v1beta1 over v1alpha1) so an object is dumped once.
func listableKinds(scheme *runtime.Scheme) []schema.GroupVersionKind {
	chosen := map[schema.GroupKind]schema.GroupVersionKind{}
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		list, err := scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil || !meta.IsListType(list) {
			continue
		}
		previous, seen := chosen[gvk.GroupKind()]
		if !seen || preferVersion(gvk.Version, previous.Version) {
			chosen[gvk.GroupKind()] = gvk
		}
	}
	kinds := make([]schema.GroupVersionKind, 0, len(chosen))
	for _, gvk := range chosen {
		kinds = append(kinds, gvk)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })
	return kinds
}

// preferVersion orders a group's versions: GA, then beta, then alpha.
func preferVersion(candidate, current string) bool {
	rank := func(v string) int {
		switch {
		case strings.Contains(v, "alpha"):
			return 0
		case strings.Contains(v, "beta"):
			return 1
		default:
			return 2
		}
	}
	if rank(candidate) != rank(current) {
		return rank(candidate) > rank(current)
	}
	return candidate > current
}
