#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine for the end-to-end suite: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet on the node's own
# containerd (not docker's), a CNI bridge, kube-proxy (iptables) and CoreDNS, all host
# processes started and stopped here. Binaries come from scripts/k8s-tools.sh.
#
#   scripts/real-cluster.sh up          start (or reuse) the cluster; prints exports on stdout
#   scripts/real-cluster.sh env         print the exports of the running cluster
#   scripts/real-cluster.sh status      which components run
#   scripts/real-cluster.sh load IMG..  import docker images into the node's containerd
#   scripts/real-cluster.sh check       exit 1 with what is missing to run a node here (builds nothing)
#   scripts/real-cluster.sh down        stop everything, clean the host, remove the state dir
#
# Everything listens on loopback or on the bridge this script makes (recog0, 10.244.0.1):
# the node IP, the API server (pods reach it through the `kubernetes` Service), the kubelet
# (for logs/exec/port-forward), CoreDNS (host process on port 53, the pods' nameserver) and
# NodePorts. All state is in one directory (REAL_CLUSTER_DIR), except the node's images
# (containerd's root, REAL_CLUSTER_IMAGES_DIR): kept across `down`, so the next `up` finds
# them loaded and unpacked.
#
# Knobs: REAL_CLUSTER_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/real-cluster),
#        REAL_CLUSTER_NODE_NAME (the host name if it is a valid node name, else recog-node),
#        REAL_CLUSTER_IMAGES_DIR (${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service/real-cluster-images),
#        REAL_CLUSTER_TIMEOUT (seconds each wait may take; 180).
# `down` keeps the last cluster's component and pod logs beside the state dir (real-cluster-last-logs).
# Needs root (containers, mounts, iptables, a bridge).
set -euo pipefail

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/recognition-service
BIN_DIR=$CACHE_DIR/bin
STATE=${REAL_CLUSTER_DIR:-$CACHE_DIR/real-cluster}
IMAGES_DIR=${REAL_CLUSTER_IMAGES_DIR:-$CACHE_DIR/real-cluster-images}
LAST_LOGS=$STATE-last-logs
TIMEOUT=${REAL_CLUSTER_TIMEOUT:-180}

# Addresses. The pod /24 doubles as the node network: its gateway is the node IP.
BRIDGE=recog0
POD_CIDR=10.244.0.0/24
NODE_IP=10.244.0.1
SERVICE_CIDR=10.96.0.0/24
KUBERNETES_SVC_IP=10.96.0.1
CLUSTER_DOMAIN=cluster.local
# Ports off the usual defaults so a second control plane on the machine (the kwok suite,
# operator tests) does not collide with this one.
ETCD_PORT=23790
ETCD_PEER_PORT=23800
APISERVER_PORT=16443
KUBELET_PORT=11250
CM_PORT=20257
SCHED_PORT=20259
KUBELET_HEALTHZ_PORT=20248
PROXY_HEALTHZ_PORT=20256
PROXY_METRICS_PORT=20249
COREDNS_READY_PORT=20181

PAUSE_IMAGE=recognition-local/pause:3.10
CNI_BIN_DIR=/usr/lib/cni
CTR_SOCK=$STATE/containerd/containerd.sock
PKI=$STATE/pki
KUBECONFIG_ADMIN=$STATE/kubeconfig

log() { echo "real-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

node_name() {
  if [ -n "${REAL_CLUSTER_NODE_NAME:-}" ]; then echo "$REAL_CLUSTER_NODE_NAME"; return; fi
  local h; h=$(hostname 2>/dev/null | tr '[:upper:]' '[:lower:]')
  # A node name is a DNS-1123 subdomain; some sandboxes have host names that are not.
  if [[ $h =~ ^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$ ]]; then echo "$h"; else echo recog-node; fi
}

# --- processes --------------------------------------------------------------------------

pid_of() { local f=$STATE/run/$1.pid; [ -f "$f" ] && cat "$f"; }
# Alive and still ours: every command line we start names the state dir, so a pid reused by
# another process after a crash or reboot is never taken for (or killed as) a component.
running() {
  local p; p=$(pid_of "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$STATE"
}

# start NAME CMD...: run in its own session, log to logs/NAME.log, pid in run/NAME.pid.
start() {
  local name=$1; shift
  if running "$name"; then return 0; fi
  mkdir -p "$STATE/logs" "$STATE/run"
  setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/run/$name.pid"
  log "started $name (pid $!, log $STATE/logs/$name.log)"
}

# stop NAME: SIGTERM, then SIGKILL after 15 s, only the pid we recorded.
stop() {
  local name=$1 p i
  p=$(pid_of "$name") || return 0
  if running "$name"; then
    kill -TERM "$p" 2>/dev/null || true
    for i in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && { log "$name did not stop on SIGTERM; killing"; kill -KILL "$p" 2>/dev/null || true; }
    log "stopped $name"
  fi
  rm -f "$STATE/run/$name.pid"
}

# wait_for DESC CMD...: poll CMD until it succeeds, at most TIMEOUT seconds.
wait_for() {
  local desc=$1; shift
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then die "timed out after ${TIMEOUT}s waiting for $desc (logs in $STATE/logs)"; fi
    sleep 0.5
  done
  log "$desc: ok"
}

# write_file PATH < content: replace PATH only when the content differs. kube-proxy exits when
# its config file is written, so a second `up` must not touch the files of running components.
write_file() {
  local tmp; tmp=$(mktemp "$1.XXXXXX")
  cat >"$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

kubectl_admin() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ctr_node() { ctr --address "$CTR_SOCK" -n k8s.io "$@"; }

# --- prerequisites ----------------------------------------------------------------------

ensure_packages() {
  local missing=() cmd pkg pair
  for pair in containerd:containerd runc:runc iptables:iptables conntrack:conntrack socat:socat \
    openssl:openssl ip:iproute2 curl:curl docker:docker.io; do
    cmd=${pair%%:*}; pkg=${pair#*:}
    command -v "$cmd" >/dev/null || missing+=("$pkg")
  done
  [ -x "$CNI_BIN_DIR/bridge" ] || missing+=(containernetworking-plugins)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# k8s-tools.sh returns at once when everything is cached, and rebuilds pause when its source changed.
ensure_binaries() {
  K8S_TOOLS_REAL_NODE=1 "$ROOT_DIR/scripts/k8s-tools.sh" install >/dev/null
}

# --- certificates and kubeconfigs --------------------------------------------------------

# One CA signs the API server's serving cert, every client cert (x509 client auth), and the
# kubelet-client cert the API server shows to the kubelet.
make_pki() {
  mkdir -p "$PKI"
  if [ ! -f "$PKI/ca.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=recognition-real-cluster-ca" \
      -keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
  fi
  if [ ! -f "$PKI/sa.key" ]; then
    openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  local node; node=$(node_name)
  sign apiserver "/CN=kube-apiserver" serverAuth \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN,DNS:localhost,IP:127.0.0.1,IP:$NODE_IP,IP:$KUBERNETES_SVC_IP"
  sign kubelet-serving "/CN=$node" serverAuth "DNS:$node,IP:$NODE_IP"
  sign admin "/O=system:masters/CN=recognition-admin" clientAuth
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  sign controller-manager "/CN=system:kube-controller-manager" clientAuth
  sign scheduler "/CN=system:kube-scheduler" clientAuth
  sign kubelet "/O=system:nodes/CN=system:node:$node" clientAuth
  sign kube-proxy "/CN=system:kube-proxy" clientAuth
  sign coredns "/CN=recognition:coredns" clientAuth
}

# sign NAME SUBJECT USAGE [SANS]
sign() {
  local name=$1 subj=$2 usage=$3 sans=${4:-}
  [ -f "$PKI/$name.crt" ] && return 0
  local ext; ext=$(mktemp)
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$ext"
  openssl req -new -newkey rsa:2048 -nodes -subj "$subj" -keyout "$PKI/$name.key" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$ext" "$PKI/$name.csr"
}

# kubeconfig FILE CERT_NAME
kubeconfig() {
  write_file "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real
  cluster:
    server: https://$NODE_IP:$APISERVER_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: real
  context: {cluster: real, user: $2}
current-context: real
EOF
}

# --- network ----------------------------------------------------------------------------

# The bridge exists before any pod so the API server, kubelet and CoreDNS can bind its IP;
# the CNI bridge plugin then finds and reuses it.
ensure_bridge() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    if ip route show | grep -q "^10\.244\.0\.0/24"; then die "10.244.0.0/24 is already routed elsewhere"; fi
    ip link add "$BRIDGE" type bridge
  fi
  ip addr show dev "$BRIDGE" | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Pod-to-Service traffic between two pods on one bridge must pass iptables (kube-proxy's DNAT).
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null ||
    die "cannot set net.bridge.bridge-nf-call-iptables (no br_netfilter module): pods could not reach Services on their own bridge"
  echo 1 >/proc/sys/net/ipv4/ip_forward
}

# firewall: docker sets the FORWARD policy to DROP, which would drop pod-to-Service traffic
# after kube-proxy's DNAT (host -> bridge -> other pod); the plugin accepts each pod's traffic.
write_cni() {
  mkdir -p "$STATE/cni/net.d" "$STATE/cni/ipam"
  write_file "$STATE/cni/net.d/10-recog.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "recog",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "firewall", "backend": "iptables"}
  ]
}
EOF
  write_file "$STATE/cni/net.d/99-loopback.conf" <<EOF
{"cniVersion": "1.0.0", "name": "lo", "type": "loopback"}
EOF
}

# --- containerd -------------------------------------------------------------------------

write_containerd_config() {
  mkdir -p "$STATE/containerd"
  write_file "$STATE/containerd/config.toml" <<EOF
version = 2
root = "$IMAGES_DIR"
state = "$STATE/containerd/state"
# Plugins this node does not use, kept off so they neither warn nor touch the host.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CTR_SOCK"

[ttrpc]
  address = "$STATE/containerd/containerd.sock.ttrpc"

[debug]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The machine refuses lowering oom_score_adj; only ever raise it.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        # runc's own state, otherwise in /run/containerd/runc shared with any other containerd.
        Root = "$STATE/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF
}

# The sandbox image: FROM scratch plus the static pause binary (tools/images/pause).
ensure_pause_image() {
  if ! docker image inspect "$PAUSE_IMAGE" >/dev/null 2>&1 ||
    [ "$(docker image inspect -f '{{index .Config.Labels "pause.sha256"}}' "$PAUSE_IMAGE")" != "$(sha256sum <"$BIN_DIR/pause" | cut -d' ' -f1)" ]; then
    local ctx; ctx=$(mktemp -d)
    cp "$(readlink -f "$BIN_DIR/pause")" "$ctx/pause"
    printf 'FROM scratch\nLABEL pause.sha256=%s\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' \
      "$(sha256sum <"$ctx/pause" | cut -d' ' -f1)" >"$ctx/Dockerfile"
    docker build -q -t "$PAUSE_IMAGE" "$ctx" >/dev/null 2>"$ctx/build.err" || { cat "$ctx/build.err" >&2; die "could not build $PAUSE_IMAGE"; }
    rm -rf "$ctx"
    log "built $PAUSE_IMAGE"
  fi
  load_images "$PAUSE_IMAGE"
}

# load IMAGE...: docker save | ctr import, skipping images whose id the node already has.
load_images() {
  local img id ref
  for img in "$@"; do
    id=$(docker image inspect -f '{{.Id}}' "$img") || die "no docker image $img"
    ref=$(node_ref "$img")
    if [ "$(image_id_on_node "$ref")" = "$id" ]; then
      log "$img already on the node"
      continue
    fi
    log "loading $img into the node"
    docker save "$img" | ctr_node images import --all-platforms - >/dev/null
  done
}

# The name an imported docker reference has on the node: containerd spells it out in full,
# with the default registry and library/ prefixes docker leaves implicit, so match the end.
node_ref() {
  local ref=$1
  [[ $ref == *:* || $ref == *@* ]] || ref=$ref:latest
  ctr_node images ls -q 2>/dev/null | awk -v r="$ref" '$0 == r || substr($0, length($0) - length(r)) == "/" r { print; exit }'
}

# The config digest (docker's image id) of an image on the node, empty when it is absent.
image_id_on_node() {
  local digest
  [ -n "$1" ] || return 0
  digest=$(ctr_node images ls 2>/dev/null | awk -v r="$1" '$1 == r {print $3}')
  [ -n "$digest" ] || return 0
  ctr_node content get "$digest" 2>/dev/null | tr -d ' \n' |
    grep -o '"config":{[^}]*"digest":"sha256:[0-9a-f]*"' | grep -o 'sha256:[0-9a-f]*' || true
}

# --- components -------------------------------------------------------------------------

start_etcd() {
  start etcd "$BIN_DIR/etcd" --name real --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "real=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn
  wait_for etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
  start kube-apiserver "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --cert-dir "$STATE/apiserver" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --allow-privileged=true --profiling=false
  wait_for kube-apiserver kubectl_admin get --raw /readyz
}

start_controllers() {
  kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
  kubeconfig "$STATE/scheduler.kubeconfig" scheduler
  start kube-controller-manager "$BIN_DIR/kube-controller-manager" \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$CM_PORT" --leader-elect=false \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --allocate-node-cidrs --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
    --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false
  start kube-scheduler "$BIN_DIR/kube-scheduler" \
    --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false
}

start_containerd() {
  write_containerd_config
  start containerd containerd --config "$STATE/containerd/config.toml"
  wait_for containerd ctr --address "$CTR_SOCK" version
}

start_kubelet() {
  local node; node=$(node_name)
  kubeconfig "$STATE/kubelet.kubeconfig" kubelet
  mkdir -p "$STATE/kubelet" "$STATE/pod-logs"
  write_file "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
# Only the API server holds a client cert from our CA with this access (logs, exec,
# port-forward); nothing anonymous.
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CTR_SOCK
clusterDNS: [$NODE_IP]
clusterDomain: $CLUSTER_DOMAIN
podCIDR: $POD_CIDR
podLogsDir: $STATE/pod-logs
serializeImagePulls: false
registerNode: true
# A shared, fairly full disk must not evict the suite's pods nor delete its imported images.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
evictionPressureTransitionPeriod: 10s
# Faster status so up and the suite see changes sooner.
nodeStatusUpdateFrequency: 5s
syncFrequency: 10s
EOF
  start kubelet "$BIN_DIR/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --hostname-override "$node" --node-ip "$NODE_IP"
}

start_proxy() {
  kubeconfig "$STATE/kube-proxy.kubeconfig" kube-proxy
  write_file "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $(node_name)
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
# NodePorts only on the node IP (the bridge), never on the machine's other interfaces.
nodePortAddresses: ["$NODE_IP/32"]
# Leave the machine's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start kube-proxy "$BIN_DIR/kube-proxy" --config "$STATE/kube-proxy.yaml"
}

start_coredns() {
  kubeconfig "$STATE/coredns.kubeconfig" coredns
  # What CoreDNS's kubernetes plugin reads.
  kubectl_admin apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "recognition:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "recognition:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "recognition:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "recognition:coredns"}
EOF
  write_file "$STATE/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    ready 127.0.0.1:$COREDNS_READY_PORT
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $STATE/coredns.kubeconfig real
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
    cache 5
    loop
}
EOF
  start coredns "$BIN_DIR/coredns" -conf "$STATE/Corefile"
}

# One UDP query for kubernetes.default.svc.<domain>, A; true when the answer count is not 0.
# The packet goes out in one write (cat of a file): bash's printf may split it in datagrams.
dns_answers() {
  local q='\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00' label reply packet
  for label in kubernetes default svc ${CLUSTER_DOMAIN//./ }; do
    q+=$(printf '\\x%02x' "${#label}")$label
  done
  q+='\x00\x00\x01\x00\x01'
  packet=$STATE/run/dns-query.bin
  # shellcheck disable=SC2059
  printf "$q" >"$packet"
  reply=$(timeout 2 bash -c 'exec 3<>"/dev/udp/$1/53"; cat "$2" >&3; head -c 8 <&3 | od -An -tx1' _ "$NODE_IP" "$packet") || return 1
  local b; read -r -a b <<<"$reply"
  # bytes 7-8 are the answer count
  [ "${#b[@]}" -ge 8 ] && [ "${b[6]}${b[7]}" != 0000 ]
}

node_ready() {
  kubectl_admin get node "$(node_name)" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True
}

print_env() {
  echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
  echo "export REAL_CLUSTER_NODE=$(node_name)"
  echo "export REAL_CLUSTER_NODE_IP=$NODE_IP"
  echo "export REAL_CLUSTER_CONTAINERD_SOCK=$CTR_SOCK"
  echo "export REAL_CLUSTER_DIR=$STATE"
  echo "export K8S_TOOLS_BIN=$BIN_DIR"
}

COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns)

cmd_up() {
  [ "$(id -u)" = 0 ] || die "needs root (containers, mounts, iptables, a bridge)"
  local start_s=$SECONDS
  ensure_packages
  ensure_binaries
  mkdir -p "$STATE"
  make_pki
  kubeconfig "$KUBECONFIG_ADMIN" admin
  ensure_bridge
  write_cni
  start_etcd
  start_apiserver
  start_controllers
  start_containerd
  ensure_pause_image
  start_kubelet
  start_proxy
  start_coredns
  wait_for "node $(node_name) Ready" node_ready
  wait_for "CoreDNS ready" curl -fsS "http://127.0.0.1:$COREDNS_READY_PORT/ready"
  wait_for "CoreDNS answering kubernetes.default" dns_answers
  wait_for "default service account" kubectl_admin -n default get serviceaccount default
  log "cluster up in $((SECONDS - start_s)) s"
  print_env
}

cmd_down() {
  [ "$(id -u)" = 0 ] || die "needs root"
  # Pods' containers first: kubelet would restart them, so stop it, then remove sandboxes.
  stop kubelet
  if running containerd; then
    local c t
    # CNI keeps a result file per sandbox (and network); ours are removed below.
    ctr_node containers ls -q 2>/dev/null >"$STATE/run/containers" || true
    for t in $(ctr_node tasks ls -q 2>/dev/null); do ctr_node tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
    for t in $(ctr_node tasks ls -q 2>/dev/null); do ctr_node tasks delete -f "$t" >/dev/null 2>&1 || true; done
    for c in $(ctr_node containers ls -q 2>/dev/null); do ctr_node containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  local name
  for name in coredns kube-proxy containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$name"; done
  # Shims outlive containerd; kill only those serving our socket.
  local p
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $CTR_SOCK" || true); do kill -KILL "$p" 2>/dev/null || true; done
  # Pod network namespaces (the CNI teardown did not run for killed sandboxes): veths go with them.
  unmount_under "$STATE"
  unmount_under /run/netns/cni-
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link delete "$BRIDGE"
  flush_iptables
  if [ -f "$STATE/run/containers" ]; then
    while read -r c; do rm -f /var/lib/cni/results/*-"$c"-* 2>/dev/null || true; done <"$STATE/run/containers"
  fi
  rm -f /var/lib/cni/results/recog-* 2>/dev/null || true
  # Shim sockets live in /run/containerd/s whatever the state dir; drop the dirs once empty.
  rmdir /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/s /run/containerd 2>/dev/null || true
  remove_cgroups
  # The logs outlive the cluster, for a post-mortem of a run that has ended (a CI run's trap).
  if [ -d "$STATE/logs" ]; then
    # A failed copy (a full disk) must not stop the teardown.
    { rm -rf "$LAST_LOGS" && mkdir -p "$LAST_LOGS" && cp -r "$STATE/logs" "$LAST_LOGS/components" &&
      if [ -d "$STATE/pod-logs" ]; then cp -r "$STATE/pod-logs" "$LAST_LOGS/pods"; fi; } ||
      log "could not keep the logs in $LAST_LOGS"
  fi
  rm -rf "$STATE"
  log "down"
}

# unmount_under PREFIX: every mount point starting with PREFIX, deepest first.
unmount_under() {
  local m
  for m in $(awk -v p="$1" 'index($2, p) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  if [[ $1 == /run/netns/cni-* ]]; then rm -f "$1"* 2>/dev/null || true; fi
}

# kube-proxy's KUBE-* chains and the CNI plugins' CNI-* chains (IPv4; kube-proxy also makes
# a few in IPv6), plus the jumps to them from the built-in chains. Docker's chains stay.
flush_iptables() {
  local cmd table chain rule
  for cmd in iptables ip6tables; do
    for table in filter nat mangle; do
      # -S prints rules shell-quoted (comments hold spaces), hence eval.
      while read -r rule; do
        eval "$cmd -t $table ${rule/-A /-D }" 2>/dev/null || true
      done < <($cmd -t "$table" -S 2>/dev/null | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j (KUBE-|CNI-)' || true)
      for chain in $($cmd -t "$table" -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
        $cmd -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $($cmd -t "$table" -S 2>/dev/null | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
        $cmd -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# The kubelet's cgroup tree (cgroupfs driver, cgroup v1): /kubepods in every hierarchy.
remove_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/kubepods; do
    [ -d "$d" ] || continue
    find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

cmd_check() {
  local missing=() cmd tool
  [ "$(id -u)" = 0 ] || missing+=("root")
  # Debian's packages (containerd, runc, CNI plugins, conntrack...) are `up`'s to install.
  for tool in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy coredns pause; do
    [ -x "$BIN_DIR/$tool" ] || missing+=("$BIN_DIR/$tool")
  done
  docker info >/dev/null 2>&1 || missing+=("a running dockerd (scripts/images.sh engine)")
  [ ${#missing[@]} -eq 0 ] && return 0
  log "missing: ${missing[*]} (scripts/k8s-tools.sh install with K8S_TOOLS_REAL_NODE=1 builds the tools)"
  return 1
}

cmd_status() {
  local name
  for name in "${COMPONENTS[@]}"; do
    if running "$name"; then echo "$name: running (pid $(pid_of "$name"))"; else echo "$name: stopped"; fi
  done
}

cmd_env() {
  running kube-apiserver || die "not running (scripts/real-cluster.sh up)"
  print_env
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  env) cmd_env ;;
  status) cmd_status ;;
  check) cmd_check ;;
  load) shift; running containerd || die "not running (scripts/real-cluster.sh up)"; load_images "$@" ;;
  *) echo "usage: $0 up|down|env|status|check|load IMAGE..." >&2; exit 2 ;;
esac
