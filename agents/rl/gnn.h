// INTERNAL (includes LibTorch): the graph-network pieces the Placeto and Aware
// agents share: a DAG as edge tensors, DAG message passing, and the per-op static
// feature columns both feed their networks. Include only from agents/rl .cc files
// and tests/rl. Pure functions of their inputs; thread-safe.
#pragma once

#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware::rl {

// A DAG's deduplicated parent -> child pairs with mean-aggregation weights, the
// input of every message-passing network here (Placeto's, Aware's).
struct DagEdgeTensors {
  int num_nodes = 0;
  torch::Tensor edge_src;    // int64 [E]: parent of each (deduplicated) edge
  torch::Tensor edge_dst;    // int64 [E]: child
  torch::Tensor in_weight;   // float [E]: 1 / number of parents of edge_dst
  torch::Tensor out_weight;  // float [E]: 1 / number of children of edge_src
};
DagEdgeTensors dag_edge_tensors(const OpGraph& graph);
// `copies` disjoint copies of g (copy c's nodes are offset by c x num_nodes), for
// running one network over several states of the same graph in one pass.
DagEdgeTensors replicate_dag(const DagEdgeTensors& g, int copies);

// `rounds` of mean message passing over a DAG from the node embeddings h0 [n x H]:
// `up` mixes in the parents' messages, `down` the children's (each round reads h0
// and the previous round). Returns the final {up, down}, each [n x H].
std::pair<torch::Tensor, torch::Tensor> dag_message_passing(const torch::Tensor& h0,
                                                            const DagEdgeTensors& g, int rounds,
                                                            torch::nn::Linear& up,
                                                            torch::nn::Linear& down);

// x.index_select(0, index) and zeros({rows, x.size(1)}).index_add_(0, index, x),
// the same values bit for bit, forward and backward, but each a differentiable op
// whose scatter (index_add's forward, index_select's backward) is one pass over
// the rows. LibTorch 1.13 runs index_add_ on a 2-D tensor as one TensorIterator
// call per index, which was a sixth of an Aware training run's time. Both add a
// source row to its target row in index order, one rounding per add, as index_add_
// does. x: contiguous or not, float or double; index: int64 [k].
torch::Tensor gather_rows(const torch::Tensor& x, const torch::Tensor& index);
torch::Tensor scatter_add_rows(const torch::Tensor& x, const torch::Tensor& index, int64_t rows);

// Static per-op feature columns, each divided by its maximum over the graph (left
// as is when that maximum is not positive): mean compute time over the devices
// (core's OpCostMatrix), total output bytes, and memory (parameters + outputs +
// workspace). One entry per op.
struct OpFeatureColumns {
  std::vector<double> cost;
  std::vector<double> out_size;
  std::vector<double> memory;
};
OpFeatureColumns op_feature_columns(const OpGraph& graph, const Cluster& cluster);
// Divides every entry of `column` by its largest one, when that is positive.
void normalise_by_max(std::vector<double>& column);

}  // namespace aware::rl
