#include "datasets/snn.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "core/rng.h"

namespace aware {
namespace {

const char* kUsage =
    "expected snn:TOPOLOGY:NEURONS[:key=value,...] with TOPOLOGY layered, lattice or random and keys "
    "layers, radius, fanout, rate, p, group, bytes, dt_ms, seed";

double number(const std::string& spec, const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v))
    throw ConfigError("snn '" + spec + "': field '" + key + "' is not a number ('" + text + "')");
  return v;
}

// A population: `neurons` split into groups of at most `group` neurons, as
// equal as they can be.
struct Population {
  std::string name;
  long long neurons = 0;
  int first_group = 0, groups = 0;
};

void split(std::vector<Population>& pops, int group, MeshTraffic& t) {
  for (Population& p : pops) {
    p.first_group = t.groups();
    p.groups = static_cast<int>((p.neurons + group - 1) / group);
    for (int g = 0; g < p.groups; ++g) {
      // Sizes differ by at most one neuron.
      const long long lo = p.neurons * g / p.groups, hi = p.neurons * (g + 1) / p.groups;
      t.group_neurons.push_back(static_cast<double>(hi - lo));
      t.group_names.push_back(p.name + "/g" + std::to_string(g));
    }
  }
}

}  // namespace

SnnSpec parse_snn_spec(const std::string& text) {
  SnnSpec s;
  s.text = text;
  std::string rest = text.rfind("snn:", 0) == 0 ? text.substr(4) : text;
  std::vector<std::string> parts;
  {
    std::stringstream in(rest);
    for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  }
  if (parts.size() < 2 || parts.size() > 3) throw ConfigError("snn '" + text + "': " + kUsage);
  s.topology = parts[0];
  if (s.topology != "layered" && s.topology != "lattice" && s.topology != "random")
    throw ConfigError("snn '" + text + "': topology '" + s.topology + "' unknown (layered, lattice, random)");
  const double n = number(text, "neurons", parts[1]);
  if (n < 1 || n > 1e8 || n != std::floor(n))
    throw ConfigError("snn '" + text + "': field 'neurons' must be a whole number in 1..100000000, got '" + parts[1] + "'");
  s.neurons = static_cast<long long>(n);
  if (parts.size() == 3) {
    std::stringstream in(parts[2]);
    for (std::string item; std::getline(in, item, ',');) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos) throw ConfigError("snn '" + text + "': '" + item + "' is not key=value; " + kUsage);
      const std::string key = item.substr(0, eq);
      const double v = number(text, key, item.substr(eq + 1));
      const auto need = [&](bool ok, const std::string& what) {
        if (!ok) throw ConfigError("snn '" + text + "': field '" + key + "' must be " + what + ", got " + item.substr(eq + 1));
      };
      if (key == "layers") need(v >= 1 && v <= 1000 && v == std::floor(v), "a whole number in 1..1000"), s.layers = static_cast<int>(v);
      else if (key == "radius") need(v > 0 && v <= 1, "in (0, 1]"), s.radius = v;
      else if (key == "fanout") need(v >= 1 && v <= 100000 && v == std::floor(v), "a whole number in 1..100000"), s.fanout = static_cast<int>(v);
      else if (key == "rate") need(v > 0 && v <= 1000, "in (0, 1000] Hz"), s.rate_hz = v;
      else if (key == "p") need(v > 0 && v <= 1, "in (0, 1]"), s.p = v;
      else if (key == "group") need(v >= 1 && v <= 1e7 && v == std::floor(v), "a whole number >= 1"), s.group = static_cast<int>(v);
      else if (key == "bytes") need(v > 0, "positive"), s.bytes_per_spike = v;
      else if (key == "dt_ms") need(v > 0 && v <= 1000, "in (0, 1000]"), s.dt_ms = v;
      else if (key == "seed") need(v >= 0 && v == std::floor(v), "a whole number >= 0"), s.seed = static_cast<std::uint64_t>(v);
      else throw ConfigError("snn '" + text + "': unknown field '" + key + "'; " + kUsage);
    }
  }
  if (s.topology == "layered" && s.neurons < s.layers)
    throw ConfigError("snn '" + text + "': " + std::to_string(s.neurons) + " neurons cannot make " +
                      std::to_string(s.layers) + " layers");
  if (s.neurons / s.group > 4000000)
    throw ConfigError("snn '" + text + "': more than 4,000,000 groups: raise 'group'");
  return s;
}

MeshTraffic build_snn_traffic(const SnnSpec& s) {
  MeshTraffic t;
  std::vector<Population> pops;
  if (s.topology == "layered") {
    for (int l = 0; l < s.layers; ++l)
      pops.push_back({"layer" + std::to_string(l), s.neurons * (l + 1) / s.layers - s.neurons * l / s.layers});
  } else {
    const long long excitatory = std::max<long long>(1, s.neurons * 4 / 5);
    pops.push_back({"exc", excitatory});
    if (s.neurons - excitatory > 0) pops.push_back({"inh", s.neurons - excitatory});
  }
  split(pops, s.group, t);
  const auto rate_between = [&](int i, int j) {
    const double ni = t.group_neurons[static_cast<size_t>(i)], nj = t.group_neurons[static_cast<size_t>(j)];
    // Neurons of i with at least one target in j, each spike sent once to j's core.
    return ni * (1 - std::pow(1 - s.p, nj)) * s.rate_hz * s.bytes_per_spike;
  };
  const auto add = [&](int i, int j) { t.flows.push_back({i, j, rate_between(i, j)}); };
  // Groups of `to` within `radius` (as a fraction of the population) of group
  // k's position in `from`; on a ring for lattice.
  const auto window = [&](const Population& from, int k, const Population& to, bool ring) {
    const double centre = (k + 0.5) / from.groups;
    const int reach = std::max(0, static_cast<int>(std::floor(s.radius * to.groups)));
    const int mid = std::min(to.groups - 1, static_cast<int>(centre * to.groups));
    std::vector<int> out;
    for (int d = -reach; d <= reach; ++d) {
      int m = mid + d;
      if (ring) m = ((m % to.groups) + to.groups) % to.groups;
      else if (m < 0 || m >= to.groups) continue;
      out.push_back(to.first_group + m);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  if (s.topology == "layered") {
    for (size_t l = 0; l < pops.size(); ++l)
      for (int k = 0; k < pops[l].groups; ++k) {
        const int src = pops[l].first_group + k;
        for (int dst : window(pops[l], k, pops[l], false))
          if (dst != src) add(src, dst);  // lateral
        if (l + 1 < pops.size())
          for (int dst : window(pops[l], k, pops[l + 1], false)) add(src, dst);  // feed-forward
      }
  } else if (s.topology == "lattice") {
    // Both populations laid on one ring by position; every group reaches the
    // groups of both populations near its position.
    for (const Population& from : pops)
      for (int k = 0; k < from.groups; ++k) {
        const int src = from.first_group + k;
        for (const Population& to : pops)
          for (int dst : window(from, k, to, true))
            if (dst != src) add(src, dst);
      }
  } else {
    SplitMixRng rng(s.seed * 0x9E3779B97F4A7C15ULL + 0x5eed);
    const int groups = t.groups();
    for (int src = 0; src < groups; ++src) {
      std::set<int> targets;
      const int want = std::min(s.fanout, groups - 1);
      while (static_cast<int>(targets.size()) < want) {
        const int dst = rng.below(groups);
        if (dst != src) targets.insert(dst);
      }
      for (int dst : targets) add(src, dst);
    }
  }
  return t;
}

OpGraph snn_op_graph(const SnnSpec& s, const MeshTraffic& t) {
  OpGraph g("snn-" + s.topology + "-" + std::to_string(s.neurons));
  g.set_source(s.text);
  const int groups = t.groups();
  std::vector<double> out_bytes(static_cast<size_t>(groups), 0), in_events(static_cast<size_t>(groups), 0);
  const double dt_s = s.dt_ms / 1000;
  for (const MeshTraffic::Flow& f : t.flows) {
    out_bytes[static_cast<size_t>(f.src)] += f.Bps * dt_s;
    // Each event delivered to j reaches n_j * p synapses on average.
    in_events[static_cast<size_t>(f.dst)] += f.Bps * dt_s / s.bytes_per_spike * t.group_neurons[static_cast<size_t>(f.dst)] * s.p;
  }
  for (int i = 0; i < groups; ++i) {
    const std::string& name = t.group_names[static_cast<size_t>(i)];
    const double n = t.group_neurons[static_cast<size_t>(i)];
    Op update;
    update.name = name + "/update";
    update.type = "NeuronUpdate";
    update.flops = 20 * n;
    update.bytes_accessed = 32 * n;
    update.param_bytes = 16 * n;
    update.output_bytes = {std::max(out_bytes[static_cast<size_t>(i)], 0.0)};
    update.colocation_group = name;
    update.block = "snn";
    g.add_op(update);
  }
  for (int i = 0; i < groups; ++i) {
    const std::string& name = t.group_names[static_cast<size_t>(i)];
    Op syn;
    syn.name = name + "/synapses";
    syn.type = "SynapticInput";
    syn.flops = 2 * in_events[static_cast<size_t>(i)];
    syn.bytes_accessed = 8 * in_events[static_cast<size_t>(i)];
    syn.output_bytes = {0};
    syn.colocation_group = name;
    syn.block = "snn";
    g.add_op(syn);
  }
  for (const MeshTraffic::Flow& f : t.flows) g.add_edge(f.src, groups + f.dst, 0, f.Bps * dt_s);
  return g;
}

}  // namespace aware
