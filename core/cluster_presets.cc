// Built-in cluster presets. Device rates are datasheet numbers (fp32 peak, memory
// size and bandwidth) with an efficiency factor; see docs/clusters.md for sources.
#include <algorithm>
#include <cstdio>
#include <string>
#include <map>
#include <mutex>
#include <thread>

#include "core/cluster.h"
#include "core/mesh.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware {
namespace {

constexpr double kGB = 1e9;

// Per GPU kind: fp32 peak, memory size and bandwidth from the datasheet, and the
// efficiency and kernel launch overhead the presets assume.
struct GpuSpec {
  const char* kind;
  double peak_flops;
  double memory_GB;
  double memory_GBps;
  double efficiency;
  double launch_overhead_us;
};

// clang-format off
constexpr GpuSpec kGpuSpecs[] = {
    {"K80", 4.37e12, 12, 240, 0.6, 5},  // one GK210 of a K80 board
    {"K40", 4.29e12, 12, 288, 0.6, 5},
    {"V100", 15.7e12, 32, 900, 0.65, 4},
    {"A100", 19.5e12, 80, 2039, 0.65, 4},
    {"H100", 67e12, 80, 3350, 0.6, 3},
    {"H200", 67e12, 141, 4800, 0.6, 3},
    // The DGX pods' GPUs at their dense BF16 tensor-core peak (the language models
    // train in BF16): NVIDIA's A100 80 GB SXM datasheet, 312 TFLOP/s, 2,039 GB/s; H100
    // SXM datasheet, 989 TFLOP/s dense, 3,350 GB/s. One GEMM efficiency per kind, not
    // tuned per model. H100: 0.73, measured: the median of nine BF16 products at the zoo
    // language models' shapes on an H200 (the same 989 TFLOP/s tensor-core peak), 0.694-
    // 0.792 (experiments/gpu/gemm_efficiency.py, experiments/results/gpu/gemm-h200.txt,
    // 2026-12-04). A100: 0.7, assumed (no A100 was lent): Megatron-LM's 137-163 TFLOP/s
    // per A100 (44-52% of peak, Narayanan et al. 2021, Table 1) is a whole step with
    // communication and bubbles, so its large GEMMs run nearer 0.7.
    {"A100-BF16", 312e12, 80, 2039, 0.7, 4},
    {"H100-BF16", 989e12, 80, 3350, 0.73, 3},
};
// clang-format on

Device gpu(const std::string& name, const std::string& kind) {
  for (const GpuSpec& spec : kGpuSpecs) {
    if (kind != spec.kind) continue;
    Device d;
    d.name = name;
    d.kind = kind;
    d.peak_flops = spec.peak_flops;
    d.memory_bytes = spec.memory_GB * kGB;
    d.memory_Bps = spec.memory_GBps * kGB;
    d.efficiency = spec.efficiency;
    d.launch_overhead_us = spec.launch_overhead_us;
    return d;
  }
  throw InternalError("unknown GPU kind " + kind);
}

// n GPUs of `kind`, each linked to one switch.
Cluster star(const std::string& name, const std::string& kind, int n, const std::string& hub,
             double link_Bps, double latency_us) {
  Cluster c(name);
  for (int i = 0; i < n; ++i) c.add_device(gpu("gpu" + std::to_string(i), kind));
  c.add_switch(hub);
  for (int i = 0; i < n; ++i)
    c.connect("gpu" + std::to_string(i), hub, link_Bps, latency_us,
              hub + "-gpu" + std::to_string(i));
  return c;
}

// K40s on PCIe 3: up to four behind each PCIe switch, switches joined at the root complex.
Cluster k40(int n) {
  Cluster c("k40x" + std::to_string(n));
  const double pcie_Bps = 10 * kGB;  // effective PCIe 3 x16 peer-to-peer
  const double latency_us = 5;
  for (int i = 0; i < n; ++i) c.add_device(gpu("gpu" + std::to_string(i), "K40"));
  const int switches = (n + 3) / 4;
  for (int s = 0; s < switches; ++s) c.add_switch("pcie" + std::to_string(s));
  if (switches > 1) c.add_switch("root");
  for (int i = 0; i < n; ++i) {
    const std::string sw = "pcie" + std::to_string(i / 4);
    c.connect("gpu" + std::to_string(i), sw, pcie_Bps, latency_us, sw + "-gpu" + std::to_string(i));
  }
  for (int s = 0; s < switches && switches > 1; ++s)
    c.connect("pcie" + std::to_string(s), "root", pcie_Bps, latency_us,
              "root-pcie" + std::to_string(s));
  return c;
}

// N nodes x G A100 GPUs: NVSwitch inside a node (300 GB/s per GPU), each node's
// 400 Gb/s uplink to a leaf switch (four nodes per leaf), leaves joined by a spine
// at four times the uplink rate: a two-level fat-tree.
Cluster multi_node(int nodes, int gpus_per_node) {
  Cluster c("multi-node:" + std::to_string(nodes) + "x" + std::to_string(gpus_per_node));
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpus_per_node; ++g)
      c.add_device(gpu("node" + std::to_string(n) + "-gpu" + std::to_string(g), "A100"));
  for (int n = 0; n < nodes; ++n) c.add_switch("node" + std::to_string(n) + "-nvswitch");
  const int leaves = (nodes + 3) / 4;
  for (int l = 0; l < leaves; ++l) c.add_switch("leaf" + std::to_string(l));
  if (leaves > 1) c.add_switch("spine");
  const double uplink_Bps = 50 * kGB;  // 400 Gb/s
  for (int n = 0; n < nodes; ++n) {
    const std::string nv = "node" + std::to_string(n) + "-nvswitch";
    for (int g = 0; g < gpus_per_node; ++g) {
      const std::string dev = "node" + std::to_string(n) + "-gpu" + std::to_string(g);
      c.connect(dev, nv, 300 * kGB, 2, nv + "-gpu" + std::to_string(g));
    }
    const std::string leaf = "leaf" + std::to_string(n / 4);
    c.connect(nv, leaf, uplink_Bps, 5, leaf + "-node" + std::to_string(n));
  }
  for (int l = 0; l < leaves && leaves > 1; ++l)
    c.connect("leaf" + std::to_string(l), "spine", 4 * uplink_Bps, 5,
              "spine-leaf" + std::to_string(l));
  return c;
}

// N DGX nodes (8 GPUs each) in a rail-optimised fat tree, as NVIDIA's DGX SuperPOD
// reference architectures lay them out: inside a node the GPUs share an NVSwitch
// (A100: NVLink 3, 600 GB/s per GPU both ways = 300 GB/s a direction; H100: NVLink 4,
// 900 GB/s = 450 GB/s); each GPU has its own InfiniBand port (A100: 200 Gb/s HDR; H100:
// 400 Gb/s NDR) to the leaf switch of its rail (rail g joins GPU g of up to 32 nodes);
// every leaf joins one spine at 32 ports' worth (non-blocking). GPUs of different
// rails on different nodes meet through the spine, or through their NVSwitch to the
// other rail, whichever route is shorter.
Cluster dgx_pod(const std::string& name, const std::string& kind, int nodes, double nvlink_Bps, double port_Bps) {
  // A rail-optimised fat tree is non-blocking: a GPU reaches any other GPU's port
  // at its own port's full rate, GPU g of every node through rail g's leaves, the
  // other rails through the spines. The contention model carries one transfer per
  // link direction, so a leaf's uplink drawn as one link would serialise the 32
  // ports behind it. Drawn instead: each GPU's InfiniBand port as a small switch
  // ("nodeN-nicG", the GPU's link to it at the port's rate), with a link from
  // it to its rail and one to the spine, so that transfers meet only at ports, as
  // in the real fabric. Latency per link: the port 1 us; port to rail 1 us (3 us
  // beyond 32 nodes, where a route crosses leaf, spine and leaf), to the spine 1 us
  // more than to the rail: 4 us between GPU g of two nodes (8 us beyond 32 nodes),
  // 6 (10) us between rails.
  constexpr int kGpus = 8, kNodesPerLeaf = 32;
  Cluster c(name);
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < kGpus; ++g) c.add_device(gpu("node" + std::to_string(n) + "-gpu" + std::to_string(g), kind));
  for (int n = 0; n < nodes; ++n) c.add_switch("node" + std::to_string(n) + "-nvswitch");
  if (nodes > 1) {
    for (int n = 0; n < nodes; ++n)
      for (int g = 0; g < kGpus; ++g) c.add_switch("node" + std::to_string(n) + "-nic" + std::to_string(g));
    for (int g = 0; g < kGpus; ++g) c.add_switch("rail" + std::to_string(g));
    c.add_switch("spine");
  }
  const double rail_latency_us = nodes > kNodesPerLeaf ? 3 : 1;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "node" + std::to_string(n);
    const std::string nv = node + "-nvswitch";
    for (int g = 0; g < kGpus; ++g) {
      const std::string dev = node + "-gpu" + std::to_string(g);
      c.connect(dev, nv, nvlink_Bps, 1, nv + "-gpu" + std::to_string(g));
      if (nodes > 1) {
        const std::string nic = node + "-nic" + std::to_string(g), rail = "rail" + std::to_string(g);
        c.connect(dev, nic, port_Bps, 1, nic);
        c.connect(nic, rail, port_Bps, rail_latency_us, rail + "-" + node);
        c.connect(nic, "spine", port_Bps, rail_latency_us + 1, "spine-" + nic);
      }
    }
  }
  return c;
}

// N commodity Hadoop nodes on one 1 GbE switch (a single rack), the cluster of the
// MapReduce-era training papers (docs/strategies.md, section
// "hadoop:N"). Each node is one device: its CPUs run one map task at a time.
Cluster hadoop(int nodes) {
  Cluster c("hadoop:" + std::to_string(nodes));
  for (int i = 0; i < nodes; ++i) {
    Device d;
    d.name = "node" + std::to_string(i);
    d.kind = "commodity-cpu";
    // 2 sockets x 4 cores at 2.5 GHz (Cloudera 2013: 2 CPUs of 4-8 cores at >= 2-2.5
    // GHz) x 8 fp32 FLOP/cycle (4-wide SSE multiply + add) = 160 GFLOP/s peak.
    d.peak_flops = 2 * 4 * 2.5e9 * 8;
    d.efficiency = 0.3;  // JVM / scalar code well below peak (assumed, as cpu-host)
    d.memory_bytes = 16 * kGB;  // within a commodity node of the time (Google 2004: 4 GB)
    d.memory_Bps = 10 * kGB;    // dual-channel DDR2/DDR3 of the period, ~10 GB/s
    d.launch_overhead_us = 2;   // per op, as cpu-host
    c.add_device(d);
  }
  c.add_switch("tor");
  // 1 GbE = 125e6 B/s line rate (Google 2004, Cloudera 2013); 50 us per hop, the top
  // of the 10-50 us Ethernet latency range (alpha-beta model notes).
  for (int i = 0; i < nodes; ++i)
    c.connect("node" + std::to_string(i), "tor", 125e6, 50, "tor-node" + std::to_string(i));
  return c;
}

Cluster cpu_host() {
  Cluster c("cpu-host");
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < cores; ++i) {
    Device d;
    d.name = "cpu" + std::to_string(i);
    d.kind = "cpu";
    d.peak_flops = 50e9;  // AVX2 FMA at ~3 GHz
    d.efficiency = 0.3;
    d.memory_bytes = 4 * kGB;
    d.memory_Bps = 10 * kGB;
    d.launch_overhead_us = 2;
    c.add_device(d);
  }
  c.add_switch("host-memory");
  for (int i = 0; i < cores; ++i)
    c.connect("cpu" + std::to_string(i), "host-memory", 10 * kGB, 1);
  return c;
}

std::vector<std::string> builtin_preset_names() {
  return {"p2.8xlarge", "k40x2",    "k40x4",    "k40x8",   "dgx-v100",
          "dgx-a100",   "hgx-h100", "hgx-h200", "multi-node:NxG", "cpu-host",
          "hadoop:N",   "mesh:WxH", "dgx-a100-pod:N", "dgx-h100-pod:N"};
}

std::mutex g_preset_mutex;
std::map<std::string, std::function<Cluster()>>& registered_presets() {
  static std::map<std::string, std::function<Cluster()>> map;
  return map;
}

}  // namespace

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names = builtin_preset_names();
  std::lock_guard<std::mutex> lock(g_preset_mutex);
  for (const auto& [name, build] : registered_presets()) names.push_back(name);
  return names;
}

void register_cluster_preset(const std::string& name, std::function<Cluster()> build) {
  const std::vector<std::string> builtin = builtin_preset_names();
  if (name.empty() || std::find(builtin.begin(), builtin.end(), name) != builtin.end() ||
      name.rfind("multi-node:", 0) == 0 || name.rfind("hadoop:", 0) == 0 || name.rfind("mesh:", 0) == 0 ||
      name.rfind("dgx-a100-pod:", 0) == 0 || name.rfind("dgx-h100-pod:", 0) == 0)
    throw ConfigError("cannot register cluster preset '" + name + "': the name is built in");
  std::lock_guard<std::mutex> lock(g_preset_mutex);
  registered_presets()[name] = std::move(build);
}

Cluster make_cluster_preset(const std::string& name) {
  Cluster c;
  std::function<Cluster()> registered;
  {
    std::lock_guard<std::mutex> lock(g_preset_mutex);
    const auto it = registered_presets().find(name);
    if (it != registered_presets().end()) registered = it->second;
  }
  if (registered) {
    // Built outside the lock: a builder may take a while (it may ask a driver).
    c = registered();
  } else if (name == "p2.8xlarge") {
    // Placeto's machine; 7.6 GB/s per direction matches its simulator's bus speed.
    c = star(name, "K80", 8, "pcie", 7.6 * kGB, 5);
  } else if (name == "k40x2" || name == "k40x4" || name == "k40x8") {
    c = k40(std::stoi(name.substr(4)));
  } else if (name == "dgx-v100") {
    c = star(name, "V100", 8, "nvlink", 150 * kGB, 2);
  } else if (name == "dgx-a100") {
    c = star(name, "A100", 8, "nvswitch", 300 * kGB, 2);
  } else if (name == "hgx-h100") {
    c = star(name, "H100", 8, "nvswitch", 450 * kGB, 1.5);
  } else if (name == "hgx-h200") {
    c = star(name, "H200", 8, "nvswitch", 450 * kGB, 1.5);
  } else if (name.rfind("multi-node:", 0) == 0) {
    int nodes = 0, gpus = 0;
    char tail = 0;
    if (std::sscanf(name.c_str() + 11, "%dx%d%c", &nodes, &gpus, &tail) != 2 || nodes < 1 ||
        gpus < 1 || nodes > 64 || gpus > 16) {
      throw ConfigError("cluster preset '" + name +
                        "': expected multi-node:NxG with 1 <= N <= 64 and 1 <= G <= 16");
    }
    c = multi_node(nodes, gpus);
  } else if (name.rfind("dgx-a100-pod:", 0) == 0 || name.rfind("dgx-h100-pod:", 0) == 0) {
    const bool h100 = name.rfind("dgx-h100-pod:", 0) == 0;
    int nodes = 0;
    char tail = 0;
    if (std::sscanf(name.c_str() + 13, "%d%c", &nodes, &tail) != 1 || nodes < 1 || nodes > 512)
      throw ConfigError("cluster preset '" + name + "': expected " + name.substr(0, 13) +
                        "N with 1 <= N <= 512 DGX nodes of 8 GPUs (up to 4,096 GPUs)");
    c = h100 ? dgx_pod(name, "H100-BF16", nodes, 450 * kGB, 50 * kGB)
             : dgx_pod(name, "A100-BF16", nodes, 300 * kGB, 25 * kGB);
  } else if (name.rfind("hadoop:", 0) == 0) {
    int nodes = 0;
    char tail = 0;
    if (std::sscanf(name.c_str() + 7, "%d%c", &nodes, &tail) != 1 || nodes < 1 || nodes > 1024) {
      throw ConfigError("cluster preset '" + name + "': expected hadoop:N with 1 <= N <= 1024");
    }
    c = hadoop(nodes);
  } else if (name.rfind("mesh:", 0) == 0) {
    c = make_mesh_cluster(parse_mesh_spec(name));
  } else if (name == "cpu-host") {
    c = cpu_host();
  } else {
    std::string known;
    for (const auto& n : cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError("unknown cluster preset '" + name + "' (known: " + known + ")");
  }
  c.set_source("preset:" + name);
  c.finalize();
  return c;
}

namespace {
std::mutex g_loader_mutex;
std::map<std::string, std::function<Cluster(const std::string&)>>& loaders() {
  static std::map<std::string, std::function<Cluster(const std::string&)>> map;
  return map;
}
}  // namespace

void register_cluster_loader(const std::string& suffix,
                             std::function<Cluster(const std::string&)> loader) {
  std::lock_guard<std::mutex> lock(g_loader_mutex);
  loaders()[suffix] = std::move(loader);
}

Cluster load_cluster(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0) return make_cluster_preset(spec.substr(7));
  // Bare preset names are accepted too, as long as no file of that name exists.
  for (const auto& n : cluster_preset_names())
    if (spec == n) return make_cluster_preset(spec);
  if (spec.rfind("multi-node:", 0) == 0 || spec.rfind("hadoop:", 0) == 0 || spec.rfind("mesh:", 0) == 0 ||
      spec.rfind("dgx-a100-pod:", 0) == 0 || spec.rfind("dgx-h100-pod:", 0) == 0)
    return make_cluster_preset(spec);
  std::function<Cluster(const std::string&)> loader;
  {
    std::lock_guard<std::mutex> lock(g_loader_mutex);
    for (const auto& [suffix, fn] : loaders()) {
      if (spec.size() > suffix.size() && spec.compare(spec.size() - suffix.size(), suffix.size(), suffix) == 0)
        loader = fn;
    }
  }
  if (loader) return loader(spec);
  if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".xml") == 0) {
    throw ConfigError(spec + ": SimGrid XML platforms need the SimGrid evaluator, which this build lacks");
  }
  return read_cluster_file(spec);
}

void require_cpu_devices(const Cluster& cluster, const std::string& cluster_spec, const std::string& who) {
  for (int d = 0; d < cluster.num_devices(); ++d) {
    const Device& dev = cluster.device(d);
    if (dev.kind != "cpu")
      throw ConfigError("--cluster " + cluster_spec + ": device '" + dev.name + "' is a " + dev.kind + ", but " +
                        who + " runs on this machine's CPU cores; give a cluster of cpu devices "
                        "(preset:cpu-host, or one that aware calibrate wrote)");
  }
}

Cluster restrict_devices(const Cluster& cluster, int count) {
  if (count < 1 || count > cluster.num_devices()) {
    throw ConfigError("cluster '" + cluster.name() + "' has " +
                      std::to_string(cluster.num_devices()) + " devices; cannot take " +
                      std::to_string(count));
  }
  Cluster out(cluster.name() + "[" + std::to_string(count) + "]");
  out.set_source(cluster.source());
  for (int d = 0; d < count; ++d) out.add_device(cluster.device(d));
  for (const auto& s : cluster.switches()) out.add_switch(s);
  auto remap = [&](int node) {
    if (node < cluster.num_devices()) return node < count ? node : -1;
    return node - cluster.num_devices() + count;
  };
  for (const Link& l : cluster.links()) {
    const int a = remap(l.a), b = remap(l.b);
    if (a < 0 || b < 0) continue;
    out.add_link(Link{l.name, a, b, l.bandwidth_Bps, l.latency_us});
  }
  out.finalize();
  return out;
}

}  // namespace aware
