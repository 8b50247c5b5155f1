// Pins coreos/etcd-operator v0.9.4, the archived operator Quorum's peers benchmark compares against
// (packages/etcd-operator/bench/peers.bench.ts). It predates Go modules, so nothing in it constrains its
// dependencies: minimal version selection would take the newest of each, whose APIs it was not written
// against. Every dependency the build reaches is pinned to the revision in v0.9.4's Gopkg.lock (Kubernetes
// 1.12-era), by require and by replace so that nothing can lift it. The proxy refuses bare commit hashes,
// hence pseudo-versions. The one deliberate departure from Gopkg.lock: json-iterator v1.1.12 with
// modern-go/reflect2 v1.0.2, as the locked reflect2 1.0.1 crashes at run time on Go >= 1.18.
module quorum.dev/tools/coreos-etcd-operator

go 1.26.0

require github.com/coreos/etcd-operator v0.9.4

require (
	cloud.google.com/go v0.19.0
	github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973
	github.com/coreos/etcd v3.2.13+incompatible
	github.com/davecgh/go-spew v1.1.1
	github.com/ghodss/yaml v1.0.0
	github.com/gogo/protobuf v1.2.1
	github.com/golang/glog v0.0.0-20160126235308-23def4e6c14b
	github.com/golang/groupcache v0.0.0-20190129154638-5b532d6fd5ef
	github.com/golang/protobuf v1.3.0
	github.com/google/btree v0.0.0-20180813153112-4030bb1f1f0c
	github.com/google/gofuzz v0.0.0-20170612174753-24818f796faf
	github.com/googleapis/gnostic v0.2.0
	github.com/gregjones/httpcache v0.0.0-20190212212710-3befbb6ad0cc
	github.com/hashicorp/golang-lru v0.5.0
	github.com/json-iterator/go v1.1.12
	github.com/matttproud/golang_protobuf_extensions v1.0.1
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 v1.0.2
	github.com/pborman/uuid v0.0.0-20170612153648-e790cca94e6c
	github.com/peterbourgon/diskv v2.0.1+incompatible
	github.com/pkg/errors v0.8.0
	github.com/prometheus/client_golang v0.8.0
	github.com/prometheus/client_model v0.0.0-20190129233127-fd36f4220a90
	github.com/prometheus/common v0.2.0
	github.com/prometheus/procfs v0.0.0-20190225181712-6ed1f7e10411
	github.com/sirupsen/logrus v1.0.4
	golang.org/x/crypto v0.0.0-20190227175134-215aa809caaf
	golang.org/x/net v0.0.0-20190227160552-c95aed5357e7
	golang.org/x/oauth2 v0.0.0-20190226205417-e64efc72b421
	golang.org/x/sys v0.0.0-20190226215855-775f8194d0f9
	golang.org/x/text v0.3.0
	golang.org/x/time v0.0.0-20181108054448-85acf8d2951c
	google.golang.org/genproto v0.0.0-20190227213309-4f5b463f9597
	google.golang.org/grpc v1.14.0
	gopkg.in/inf.v0 v0.9.1
	gopkg.in/yaml.v2 v2.2.2
	k8s.io/api v0.0.0-20190226173710-145d52631d00
	k8s.io/apiextensions-apiserver v0.0.0-20190226180157-bd0469a053ff
	k8s.io/apimachinery v0.0.0-20190221084156-01f179d85dbc
	k8s.io/client-go v0.0.0-20190226174127-78295b709ec6
	k8s.io/kube-openapi v0.0.0-20190225204428-d50a959ae76a
)

replace (
	cloud.google.com/go => cloud.google.com/go v0.19.0
	github.com/beorn7/perks => github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973
	github.com/coreos/etcd => github.com/coreos/etcd v3.2.13+incompatible
	github.com/davecgh/go-spew => github.com/davecgh/go-spew v1.1.1
	github.com/ghodss/yaml => github.com/ghodss/yaml v1.0.0
	github.com/gogo/protobuf => github.com/gogo/protobuf v1.2.1
	github.com/golang/glog => github.com/golang/glog v0.0.0-20160126235308-23def4e6c14b
	github.com/golang/groupcache => github.com/golang/groupcache v0.0.0-20190129154638-5b532d6fd5ef
	github.com/golang/protobuf => github.com/golang/protobuf v1.3.0
	github.com/google/btree => github.com/google/btree v0.0.0-20180813153112-4030bb1f1f0c
	github.com/google/gofuzz => github.com/google/gofuzz v0.0.0-20170612174753-24818f796faf
	github.com/googleapis/gnostic => github.com/googleapis/gnostic v0.2.0
	github.com/gregjones/httpcache => github.com/gregjones/httpcache v0.0.0-20190212212710-3befbb6ad0cc
	github.com/hashicorp/golang-lru => github.com/hashicorp/golang-lru v0.5.0
	github.com/json-iterator/go => github.com/json-iterator/go v1.1.12
	github.com/matttproud/golang_protobuf_extensions => github.com/matttproud/golang_protobuf_extensions v1.0.1
	github.com/modern-go/concurrent => github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.2
	github.com/pborman/uuid => github.com/pborman/uuid v0.0.0-20170612153648-e790cca94e6c
	github.com/peterbourgon/diskv => github.com/peterbourgon/diskv v2.0.1+incompatible
	github.com/pkg/errors => github.com/pkg/errors v0.8.0
	github.com/prometheus/client_golang => github.com/prometheus/client_golang v0.8.0
	github.com/prometheus/client_model => github.com/prometheus/client_model v0.0.0-20190129233127-fd36f4220a90
	github.com/prometheus/common => github.com/prometheus/common v0.2.0
	github.com/prometheus/procfs => github.com/prometheus/procfs v0.0.0-20190225181712-6ed1f7e10411
	github.com/sirupsen/logrus => github.com/sirupsen/logrus v1.0.4
	golang.org/x/crypto => golang.org/x/crypto v0.0.0-20190227175134-215aa809caaf
	golang.org/x/net => golang.org/x/net v0.0.0-20190227160552-c95aed5357e7
	golang.org/x/oauth2 => golang.org/x/oauth2 v0.0.0-20190226205417-e64efc72b421
	golang.org/x/sys => golang.org/x/sys v0.0.0-20190226215855-775f8194d0f9
	golang.org/x/text => golang.org/x/text v0.3.0
	golang.org/x/time => golang.org/x/time v0.0.0-20181108054448-85acf8d2951c
	google.golang.org/genproto => google.golang.org/genproto v0.0.0-20190227213309-4f5b463f9597
	google.golang.org/grpc => google.golang.org/grpc v1.14.0
	gopkg.in/inf.v0 => gopkg.in/inf.v0 v0.9.1
	gopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.2.2
	k8s.io/api => k8s.io/api v0.0.0-20190226173710-145d52631d00
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.0.0-20190226180157-bd0469a053ff
	k8s.io/apimachinery => k8s.io/apimachinery v0.0.0-20190221084156-01f179d85dbc
	k8s.io/client-go => k8s.io/client-go v0.0.0-20190226174127-78295b709ec6
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20190225204428-d50a959ae76a
)
