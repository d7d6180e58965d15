// Spiking neural networks for neuromorphic meshes (the graph-to-core family):
// populations of neurons with firing rates and connection probabilities, split
// into groups that fit a core, with the spike traffic between groups.
//
// Spec: "snn:TOPOLOGY:NEURONS[:key=value,...]", TOPOLOGY one of
//   layered  feed-forward layers (layers=8) of equal populations; each group
//            projects topographically to the groups of the next layer and of
//            its own layer within a window (radius=0.03 of a layer) — a sensory
//            pathway;
//   lattice  one recurrent sheet of excitatory (80%) and inhibitory (20%)
//            groups on a ring, each connected to the groups within radius — a
//            cortical sheet with local connectivity;
//   random   one recurrent excitatory/inhibitory network, each group connected
//            to fanout=32 groups drawn at random (seed=1) — no locality at all.
// Other keys: rate (Hz, 10), p (synapse probability per neuron pair, 0.02),
// group (neurons per group, 64), bytes (per spike, 4: one address event),
// dt_ms (biological time step, 1).
//
// Traffic: a neuron that spikes sends one event to every core holding at least
// one of its targets (multicast per core), so group i sends to group j
//   n_i * (1 - (1 - p)^n_j) * rate * bytes   bytes per second.
#pragma once

#include <cstdint>
#include <string>

#include "core/mesh.h"
#include "core/op_graph.h"

namespace aware {

struct SnnSpec {
  std::string topology;
  long long neurons = 0;
  int layers = 8;
  double radius = 0.03;
  int fanout = 32;
  double rate_hz = 10;
  double p = 0.02;
  int group = 64;
  double bytes_per_spike = 4;
  double dt_ms = 1;
  std::uint64_t seed = 1;
  std::string text;  // the spec as given
};

// Throws ConfigError naming the spec and the field: an unknown topology or key,
// neurons outside 1..10^8, a group size < 1, p outside (0, 1], and so on.
SnnSpec parse_snn_spec(const std::string& spec);

// The groups (in population order, then position) and their traffic.
MeshTraffic build_snn_traffic(const SnnSpec& spec);

// One biological time step as an OpGraph, for the contention simulator and
// every placer: per group an update op (the neurons integrate and fire) and a
// synapse op (incoming spikes applied), in one colocation group; an edge from
// each group's update op to each target group's synapse op carries the spikes
// of one step (flow bytes/s x dt). Costs: 20 FLOP per neuron update, 2 FLOP per
// synaptic event; memory: 16 bytes of state per neuron.
OpGraph snn_op_graph(const SnnSpec& spec, const MeshTraffic& traffic);

}  // namespace aware
