// localkube's NetworkPolicy agent: kube-router v2.1.0's network policy controller (iptables + ipset), the
// package its own binary runs, started here without kube-router's routing, proxy and BGP parts.
//
// localkube's nodes share one kernel and one network stack, so one agent enforces every node's policies,
// as one kube-proxy serves every node. Two changes of view make that work, and nothing of kube-router's
// rule generation changes:
//
//   - kube-router firewalls the pods whose status.hostIP is its node's address. Every pod (host-network
//     pods excepted, which NetworkPolicy does not cover) is shown to it with --node's address, so the pods of
//     all nodes get their firewall chains from this one process. Agents per node would each delete the
//     others' chains and ipsets on every sync (kube-router treats every KUBE-POD-FW-* chain it did not make
//     in this sync as stale) and overwrite each other's iptables-restore of the whole filter table.
//   - kube-router puts its jumps at the top of the built-in INPUT, FORWARD and OUTPUT chains, and ACCEPTs
//     there what a policy allows, which would skip localkube's egress fence and fault rules further down.
//     Its iptables calls on those three chains go to --hook-prefix<CHAIN> instead (LOCALKUBE-POLICY-FORWARD
//     …), chains localkube creates and jumps to after its own rules.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	"github.com/cloudnativelabs/kube-router/v2/pkg/utils"
	"github.com/coreos/go-iptables/iptables"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// kube-router's version, for the log; tools/kube-router/go.mod pins the same.
const kubeRouterVersion = "v2.1.0"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the agent's identity")
	node := flag.String("node", "", "the Node whose address every pod is shown with")
	serviceCIDR := flag.String("service-cluster-ip-range", "", "the cluster's Service range")
	hookPrefix := flag.String("hook-prefix", "", "prefix of the filter chains that stand in for INPUT, FORWARD and OUTPUT")
	syncPeriod := flag.Duration("sync-period", 5*time.Minute, "full resync period (changes sync at once)")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *node == "" || *serviceCIDR == "" || *hookPrefix == "" {
		fmt.Fprintln(os.Stderr, "usage: kube-router-netpol --kubeconfig FILE --node NAME --service-cluster-ip-range CIDR --hook-prefix PREFIX")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *node, *serviceCIDR, *hookPrefix, *syncPeriod); err != nil {
		klog.Errorf("kube-router netpol: %v", err)
		os.Exit(1)
	}
}

func run(kubeconfig, node, serviceCIDR, hookPrefix string, syncPeriod time.Duration) error {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	nodeObj, err := utils.GetNodeObject(client, node)
	if err != nil {
		return err
	}
	nodeIP, err := utils.GetPrimaryNodeIP(nodeObj)
	if err != nil {
		return err
	}

	config := options.NewKubeRouterConfig()
	config.HostnameOverride = node
	config.ClusterIPCIDRs = []string{serviceCIDR}
	config.EnableIPv4 = true
	config.EnableIPv6 = false
	config.IPTablesSyncPeriod = syncPeriod

	iptablesHandlers, ipsetHandlers, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		return err
	}
	for family, handler := range iptablesHandlers {
		iptablesHandlers[family] = hookedChains{IPTablesHandler: handler, prefix: hookPrefix}
	}

	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(onOneNode(nodeIP.String())))
	podInformer := factory.Core().V1().Pods().Informer()
	nsInformer := factory.Core().V1().Namespaces().Informer()
	npInformer := factory.Networking().V1().NetworkPolicies().Informer()

	var ipsetMutex sync.Mutex
	npc, err := netpol.NewNetworkPolicyController(client, config, podInformer, npInformer, nsInformer, &ipsetMutex, iptablesHandlers, ipsetHandlers)
	if err != nil {
		return err
	}
	for informer, handler := range map[cache.SharedIndexInformer]cache.ResourceEventHandler{
		podInformer: npc.PodEventHandler, nsInformer: npc.NamespaceEventHandler, npInformer: npc.NetworkPolicyEventHandler,
	} {
		if _, err := informer.AddEventHandler(handler); err != nil {
			return err
		}
	}

	stop := make(chan struct{})
	factory.Start(stop)
	for kind, synced := range factory.WaitForCacheSync(stop) {
		if !synced {
			return fmt.Errorf("the %v cache did not sync", kind)
		}
	}

	// kube-router's health checker reads these heartbeats; nothing here does, but the controller blocks on sending them.
	heartbeats := make(chan *healthcheck.ControllerHeartbeat, 10)
	go func() {
		for range heartbeats {
		}
	}()

	klog.Infof("kube-router %s network policy controller: pods of every node as %s's (%s), hooks in %s{INPUT,FORWARD,OUTPUT}", kubeRouterVersion, node, nodeIP, hookPrefix)
	var wg sync.WaitGroup
	wg.Add(1)
	go npc.Run(heartbeats, stop, &wg)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	klog.Infof("stopping on %v", <-signals)
	close(stop)
	wg.Wait()
	return nil
}

// onOneNode shows every pod that has a node address with nodeIP instead (see the file's comment).
func onOneNode(nodeIP string) cache.TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.HostNetwork || pod.Status.HostIP == "" {
			return obj, nil
		}
		pod.Status.HostIP = nodeIP
		pod.Status.HostIPs = []v1.HostIP{{IP: nodeIP}}
		return pod, nil
	}
}

// hookedChains sends kube-router's calls on the filter table's INPUT, FORWARD and OUTPUT to prefix+CHAIN.
type hookedChains struct {
	utils.IPTablesHandler
	prefix string
}

func (h hookedChains) chain(table, chain string) string {
	if table == "filter" && (chain == "INPUT" || chain == "FORWARD" || chain == "OUTPUT") {
		return h.prefix + chain
	}
	return chain
}

// Rules listed from a stand-in chain read as rules of the built-in one, as kube-router expects.
func (h hookedChains) unhook(table, chain string, rules []string) []string {
	hooked := h.chain(table, chain)
	if hooked == chain {
		return rules
	}
	out := make([]string, len(rules))
	for i, rule := range rules {
		out[i] = strings.Replace(strings.Replace(rule, "-A "+hooked+" ", "-A "+chain+" ", 1), "-N "+hooked, "-N "+chain, 1)
	}
	return out
}

func (h hookedChains) Exists(table, chain string, rulespec ...string) (bool, error) {
	return h.IPTablesHandler.Exists(table, h.chain(table, chain), rulespec...)
}

func (h hookedChains) Insert(table, chain string, pos int, rulespec ...string) error {
	return h.IPTablesHandler.Insert(table, h.chain(table, chain), pos, rulespec...)
}

func (h hookedChains) Append(table, chain string, rulespec ...string) error {
	return h.IPTablesHandler.Append(table, h.chain(table, chain), rulespec...)
}

func (h hookedChains) AppendUnique(table, chain string, rulespec ...string) error {
	return h.IPTablesHandler.AppendUnique(table, h.chain(table, chain), rulespec...)
}

func (h hookedChains) Delete(table, chain string, rulespec ...string) error {
	return h.IPTablesHandler.Delete(table, h.chain(table, chain), rulespec...)
}

func (h hookedChains) DeleteIfExists(table, chain string, rulespec ...string) error {
	return h.IPTablesHandler.DeleteIfExists(table, h.chain(table, chain), rulespec...)
}

func (h hookedChains) List(table, chain string) ([]string, error) {
	rules, err := h.IPTablesHandler.List(table, h.chain(table, chain))
	return h.unhook(table, chain, rules), err
}

func (h hookedChains) ListWithCounters(table, chain string) ([]string, error) {
	rules, err := h.IPTablesHandler.ListWithCounters(table, h.chain(table, chain))
	return h.unhook(table, chain, rules), err
}

func (h hookedChains) ChainExists(table, chain string) (bool, error) {
	return h.IPTablesHandler.ChainExists(table, h.chain(table, chain))
}

func (h hookedChains) Stats(table, chain string) ([][]string, error) {
	return h.IPTablesHandler.Stats(table, h.chain(table, chain))
}

func (h hookedChains) StructuredStats(table, chain string) ([]iptables.Stat, error) {
	return h.IPTablesHandler.StructuredStats(table, h.chain(table, chain))
}

func (h hookedChains) ClearChain(table, chain string) error {
	return h.IPTablesHandler.ClearChain(table, h.chain(table, chain))
}

func (h hookedChains) ChangePolicy(table, chain, target string) error {
	if h.chain(table, chain) != chain {
		return fmt.Errorf("localkube: kube-router may not change the policy of %s", chain)
	}
	return h.IPTablesHandler.ChangePolicy(table, chain, target)
}
