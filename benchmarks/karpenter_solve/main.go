// Command karpenter-solve times Karpenter's own provisioning scheduler (Scheduler.Solve from
// sigs.k8s.io/karpenter) on one problem written by benchmarks/side_by_side.py, so that
// `joinery plan` can be compared with it on the same pods, NodePool and catalog.
//
// Input (one JSON file, argument 1):
//
//	{"nodePools": [NodePool manifests], "pods": [Pod manifests],
//	 "daemonSets": [DaemonSet manifests], "catalog": {"instanceTypes": [...]}}
//
// The catalog is Joinery's catalog document (models/catalog.py): per type its capacity,
// overhead, requirements and offerings (zone, capacityType, price, available). Each type gets
// the requirements Joinery's InstanceType.build gives it: instance-type = its name, zone and
// capacity type = those of its offerings, and kubernetes.io/arch amd64 / kubernetes.io/os linux
// unless the entry says otherwise. The overhead becomes the type's kube-reserved.
//
// The scheduler is built the way Karpenter's scheduling benchmark builds it
// (pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go): a controller-runtime
// fake client, the fake cloud provider holding the catalog, NewTopology then NewScheduler.
// Only Solve is timed.
//
// Output (stdout, one JSON object): solve seconds, the NodeClaims with their price, the pods
// left unschedulable, and a summary of the problem as Karpenter parsed it, which the Python
// side compares with Joinery's reading of the same problem.
//
// A NodeClaim's price is what Joinery's `joinery plan` reports as a claim's `price`: the
// cheapest available offering, of any of the claim's instance-type options, that the claim's
// requirements allow (zone, capacity type). Karpenter orders a claim's options by exactly that
// price and launches through the cloud provider at the cheapest such offering.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	karpreq "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

type catalogOffering struct {
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	Available    *bool   `json:"available,omitempty"`
}

type catalogType struct {
	Name         string                                    `json:"name"`
	Capacity     map[corev1.ResourceName]resource.Quantity `json:"capacity"`
	Overhead     map[corev1.ResourceName]resource.Quantity `json:"overhead"`
	Requirements []v1.NodeSelectorRequirementWithMinValues `json:"requirements"`
	Offerings    []catalogOffering                         `json:"offerings"`
}

type input struct {
	NodePools  []*v1.NodePool      `json:"nodePools"`
	Pods       []*corev1.Pod       `json:"pods"`
	DaemonSets []*appsv1.DaemonSet `json:"daemonSets"`
	Catalog    struct {
		InstanceTypes []catalogType `json:"instanceTypes"`
	} `json:"catalog"`
}

type claimOut struct {
	NodePool     string  `json:"nodePool"`
	InstanceType string  `json:"instanceType"`
	Options      int     `json:"instanceTypeOptions"`
	Price        float64 `json:"price"`
	Pods         int     `json:"pods"`
}

type summary struct {
	Pods              int                 `json:"pods"`
	RequestsMilliCPU  int64               `json:"requestsMilliCpu"`
	RequestsMemory    int64               `json:"requestsMemoryBytes"`
	PoolRequirements  map[string][]string `json:"poolRequirements"`
	PoolLimits        map[string]string   `json:"poolLimits"`
	InstanceTypes     int                 `json:"instanceTypes"`
	Offerings         int                 `json:"offerings"`
	OfferingPriceSum  float64             `json:"offeringPriceSum"`
	AllocatableMilli  int64               `json:"allocatableMilliCpu"`
	AllocatableMemory int64               `json:"allocatableMemoryBytes"`
	DaemonSetPods     int                 `json:"daemonSetPods"`
}

type output struct {
	Version           string     `json:"karpenter"`
	GoMaxProcs        string     `json:"gomaxprocs"`
	SolveSeconds      float64    `json:"solveSeconds"`
	SolveCPUSeconds   float64    `json:"solveCpuSeconds"`
	NodeClaims        int        `json:"nodeClaims"`
	CostPerHour       float64    `json:"costPerHour"`
	PodsPlaced        int        `json:"podsPlaced"`
	Unschedulable     int        `json:"unschedulable"`
	UnschedulablePods []string   `json:"unschedulablePods"`
	UnschedulableWhy  []string   `json:"unschedulableExamples"`
	Claims            []claimOut `json:"claims"`
	Summary           summary    `json:"summary"`
}

// karpenterVersion is stamped by build.sh from go.mod.
var karpenterVersion = "unknown"

func instanceType(c catalogType) (*cloudprovider.InstanceType, error) {
	if len(c.Offerings) == 0 {
		return nil, fmt.Errorf("instance type %s: no offerings", c.Name)
	}
	reqs := karpreq.NewNodeSelectorRequirementsWithMinValues(c.Requirements...)
	zones := map[string]bool{}
	capacityTypes := map[string]bool{}
	var offerings cloudprovider.Offerings
	for _, o := range c.Offerings {
		zones[o.Zone] = true
		capacityTypes[o.CapacityType] = true
		offerings = append(offerings, &cloudprovider.Offering{
			Requirements: karpreq.NewLabelRequirements(map[string]string{
				v1.CapacityTypeLabelKey:  o.CapacityType,
				corev1.LabelTopologyZone: o.Zone,
			}),
			Price:     o.Price,
			Available: o.Available == nil || *o.Available,
		})
	}
	reqs.Add(karpreq.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, c.Name))
	if !reqs.Has(corev1.LabelArchStable) {
		reqs.Add(karpreq.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "amd64"))
	}
	if !reqs.Has(corev1.LabelOSStable) {
		reqs.Add(karpreq.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, string(corev1.Linux)))
	}
	reqs.Add(karpreq.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, keys(zones)...))
	reqs.Add(karpreq.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, keys(capacityTypes)...))
	return &cloudprovider.InstanceType{
		Name:         c.Name,
		Requirements: reqs,
		Offerings:    offerings,
		Capacity:     corev1.ResourceList(c.Capacity),
		Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: corev1.ResourceList(c.Overhead)},
	}, nil
}

// cpuSeconds is the process's user + system CPU time so far (with GOMAXPROCS=1 the solve and
// its garbage collection share one core, so the difference around Solve is its CPU cost).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// claimPrice is the cheapest available offering among the claim's instance-type options that
// the claim's requirements allow (the order Karpenter's OrderByPrice uses).
func claimPrice(nc *scheduling.NodeClaim) (float64, string) {
	best, name := math.Inf(1), ""
	for _, it := range nc.InstanceTypeOptions {
		for _, of := range it.Offerings {
			if of.Available && of.Price < best &&
				nc.Requirements.IsCompatible(of.Requirements, karpreq.AllowUndefinedWellKnownLabels) {
				best, name = of.Price, it.Name
			}
		}
	}
	return best, name
}

func summarize(in *input, its []*cloudprovider.InstanceType, dsPods []*corev1.Pod) summary {
	req := resources.RequestsForPods(in.Pods...)
	s := summary{
		Pods:             len(in.Pods),
		RequestsMilliCPU: req.Cpu().MilliValue(),
		RequestsMemory:   req.Memory().Value(),
		PoolRequirements: map[string][]string{},
		PoolLimits:       map[string]string{},
		InstanceTypes:    len(its),
		DaemonSetPods:    len(dsPods),
	}
	for _, np := range in.NodePools {
		reqs := []string{}
		for _, r := range np.Spec.Template.Spec.Requirements {
			vals := append([]string(nil), r.Values...)
			sort.Strings(vals)
			reqs = append(reqs, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(vals, ",")))
		}
		sort.Strings(reqs)
		s.PoolRequirements[np.Name] = reqs
		for k, v := range np.Spec.Limits {
			s.PoolLimits[np.Name+"/"+string(k)] = fmt.Sprint(v.AsApproximateFloat64())
		}
	}
	for _, it := range its {
		alloc := it.Allocatable()
		s.AllocatableMilli += alloc.Cpu().MilliValue()
		s.AllocatableMemory += alloc.Memory().Value()
		for _, of := range it.Offerings {
			s.Offerings++
			s.OfferingPriceSum += of.Price
		}
	}
	return s
}

func run(path string) (*output, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(in.NodePools) == 0 {
		return nil, fmt.Errorf("%s: no nodePools", path)
	}
	var its []*cloudprovider.InstanceType
	for _, c := range in.Catalog.InstanceTypes {
		// A cloud provider registers the labels its instance types carry as well known
		// (the AWS provider does so for karpenter.k8s.aws/*), so that a NodePool or pod may
		// select on them; catalog label keys are treated the same way here.
		for _, r := range c.Requirements {
			v1.WellKnownLabels.Insert(r.Key)
		}
		it, err := instanceType(c)
		if err != nil {
			return nil, err
		}
		its = append(its, it)
	}
	for i, p := range in.Pods {
		if p.UID == "" {
			// the scheduler caches per-pod data by UID
			p.UID = types.UID(fmt.Sprintf("pod-%d-%s-%s", i, p.Namespace, p.Name))
		}
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		if p.Status.Phase == "" {
			p.Status.Phase = corev1.PodPending
		}
	}
	var dsPods []*corev1.Pod
	for _, ds := range in.DaemonSets {
		dsPods = append(dsPods, daemonset.PodForDaemonSet(ds))
	}

	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	cloudProvider := fake.NewCloudProvider()
	cloudProvider.InstanceTypes = its
	byPool := map[string][]*cloudprovider.InstanceType{}
	for _, np := range in.NodePools {
		byPool[np.Name] = its
	}
	kubeClient := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cluster := state.NewCluster(clk, kubeClient, cloudProvider)
	topology, err := scheduling.NewTopology(ctx, kubeClient, cluster, nil, in.NodePools, byPool, in.Pods)
	if err != nil {
		return nil, fmt.Errorf("creating topology: %w", err)
	}
	scheduler := scheduling.NewScheduler(ctx, kubeClient, in.NodePools, cluster, nil, topology, byPool,
		dsPods, events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil)

	cpu0 := cpuSeconds()
	start := time.Now()
	results, err := scheduler.Solve(ctx, in.Pods)
	elapsed := time.Since(start)
	cpu := cpuSeconds() - cpu0
	if err != nil {
		return nil, fmt.Errorf("solve: %w", err)
	}

	out := &output{
		Version:         karpenterVersion,
		GoMaxProcs:      os.Getenv("GOMAXPROCS"),
		SolveSeconds:    elapsed.Seconds(),
		SolveCPUSeconds: cpu,
		NodeClaims:      len(results.NewNodeClaims),
		Unschedulable:   len(results.PodErrors),
		Summary:         summarize(&in, its, dsPods),
	}
	for _, nc := range results.NewNodeClaims {
		price, name := claimPrice(nc)
		out.CostPerHour += price
		out.PodsPlaced += len(nc.Pods)
		out.Claims = append(out.Claims, claimOut{
			NodePool: nc.NodePoolName, InstanceType: name, Options: len(nc.InstanceTypeOptions),
			Price: price, Pods: len(nc.Pods),
		})
	}
	for p, e := range results.PodErrors {
		out.UnschedulablePods = append(out.UnschedulablePods, p.Namespace+"/"+p.Name)
		if len(out.UnschedulableWhy) < 5 {
			out.UnschedulableWhy = append(out.UnschedulableWhy, fmt.Sprintf("%s/%s: %v", p.Namespace, p.Name, e))
		}
	}
	sort.Strings(out.UnschedulablePods)
	sort.Strings(out.UnschedulableWhy)
	return out, nil
}

func main() {
	log.SetLogger(logging.NopLogger)
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: karpenter-solve INPUT.json")
		os.Exit(2)
	}
	out, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-solve:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-solve:", err)
		os.Exit(1)
	}
}
