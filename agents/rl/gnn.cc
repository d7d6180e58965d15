// The shared graph-network code (gnn.h). LibTorch translation unit.
#include "agents/rl/gnn.h"

#include <algorithm>

#include "core/cost_model.h"
#include "core/errors.h"

namespace aware::rl {

namespace {

// out[index[i]] += x[i] for i in order: index_add_'s arithmetic (one add per
// element, so with alpha 1 the same rounding) without its per-index dispatch.
template <typename T>
void add_rows_in_order(const torch::Tensor& x, const torch::Tensor& index, torch::Tensor& out) {
  const int64_t k = index.size(0), width = x.size(1), rows = out.size(0);
  const T* src = x.data_ptr<T>();
  const int64_t* at = index.data_ptr<int64_t>();
  T* dst = out.data_ptr<T>();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t r = at[i];
    AWARE_CHECK(r >= 0 && r < rows, "scatter_add_rows: index out of range");
    T* o = dst + r * width;
    const T* s = src + i * width;
    for (int64_t c = 0; c < width; ++c) o[c] += s[c];
  }
}

torch::Tensor scatter_rows(const torch::Tensor& x, const torch::Tensor& index, int64_t rows) {
  AWARE_CHECK(x.dim() == 2 && index.dim() == 1 && index.size(0) == x.size(0) && index.scalar_type() == torch::kInt64,
              "scatter_add_rows: want x [k x w] and an int64 index [k]");
  const torch::Tensor xc = x.contiguous(), ic = index.contiguous();
  torch::Tensor out = torch::zeros({rows, x.size(1)}, x.options());
  if (x.scalar_type() == torch::kFloat)
    add_rows_in_order<float>(xc, ic, out);
  else if (x.scalar_type() == torch::kDouble)
    add_rows_in_order<double>(xc, ic, out);
  else
    out.index_add_(0, ic, xc);
  return out;
}

struct GatherRows : public torch::autograd::Function<GatherRows> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& index) {
    ctx->saved_data["rows"] = x.size(0);
    ctx->save_for_backward({index});
    return x.index_select(0, index);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const torch::Tensor index = ctx->get_saved_variables()[0];
    return {scatter_rows(grads[0], index, ctx->saved_data["rows"].toInt()), torch::Tensor()};
  }
};

struct ScatterAddRows : public torch::autograd::Function<ScatterAddRows> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& index, int64_t rows) {
    ctx->save_for_backward({index});
    return scatter_rows(x, index, rows);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const torch::Tensor index = ctx->get_saved_variables()[0];
    return {grads[0].index_select(0, index), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor gather_rows(const torch::Tensor& x, const torch::Tensor& index) {
  if (x.dim() != 2) return x.index_select(0, index);
  return GatherRows::apply(x, index);
}

torch::Tensor scatter_add_rows(const torch::Tensor& x, const torch::Tensor& index, int64_t rows) {
  return ScatterAddRows::apply(x, index, rows);
}

DagEdgeTensors dag_edge_tensors(const OpGraph& graph) {
  const int n = graph.num_ops();
  std::vector<std::pair<int, int>> pairs;
  for (const Edge& e : graph.edges()) pairs.emplace_back(e.src, e.dst);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<int> parents(n, 0), children(n, 0);
  for (auto [s, d] : pairs) {
    ++children[s];
    ++parents[d];
  }
  std::vector<int64_t> src, dst;
  std::vector<float> in_w, out_w;
  for (auto [s, d] : pairs) {
    src.push_back(s);
    dst.push_back(d);
    in_w.push_back(1.0f / parents[d]);
    out_w.push_back(1.0f / children[s]);
  }
  DagEdgeTensors g;
  g.num_nodes = n;
  g.edge_src = torch::tensor(src, torch::kInt64);
  g.edge_dst = torch::tensor(dst, torch::kInt64);
  g.in_weight = torch::tensor(in_w, torch::kFloat);
  g.out_weight = torch::tensor(out_w, torch::kFloat);
  return g;
}

std::pair<torch::Tensor, torch::Tensor> dag_message_passing(const torch::Tensor& h0,
                                                            const DagEdgeTensors& g, int rounds,
                                                            torch::nn::Linear& up_layer,
                                                            torch::nn::Linear& down_layer) {
  // Each round computes relu(W [h0, message] + b). The layer's weight is split in
  // its h0 block and its message block, so the h0 term (the same every round) is
  // computed once: identical to applying the layer to the concatenation, with
  // less work and no concatenated copies per round.
  const int64_t H = h0.size(1);
  AWARE_CHECK(up_layer->weight.size(1) == 2 * H && down_layer->weight.size(1) == 2 * H,
              "message-passing layers must read [h0, message]");
  const torch::Tensor up_self =
      torch::addmm(up_layer->bias, h0, up_layer->weight.narrow(1, 0, H).t());
  const torch::Tensor down_self =
      torch::addmm(down_layer->bias, h0, down_layer->weight.narrow(1, 0, H).t());
  const torch::Tensor up_msg_w = up_layer->weight.narrow(1, H, H).t();
  const torch::Tensor down_msg_w = down_layer->weight.narrow(1, H, H).t();
  torch::Tensor up = h0, down = h0;
  const bool has_edges = g.edge_src.numel() > 0;
  const torch::Tensor in_w = g.in_weight.unsqueeze(1), out_w = g.out_weight.unsqueeze(1);
  for (int r = 0; r < rounds; ++r) {
    if (!has_edges) {
      up = torch::relu(up_self);
      down = torch::relu(down_self);
      continue;
    }
    // Mean over parents (into each child) and over children (into each parent).
    const int64_t n = h0.size(0);
    const torch::Tensor from_parents = scatter_add_rows(gather_rows(up, g.edge_src) * in_w, g.edge_dst, n);
    const torch::Tensor from_children = scatter_add_rows(gather_rows(down, g.edge_dst) * out_w, g.edge_src, n);
    up = torch::relu(torch::addmm(up_self, from_parents, up_msg_w));
    down = torch::relu(torch::addmm(down_self, from_children, down_msg_w));
  }
  return {up, down};
}

DagEdgeTensors replicate_dag(const DagEdgeTensors& g, int copies) {
  DagEdgeTensors r;
  r.num_nodes = g.num_nodes * copies;
  std::vector<torch::Tensor> src, dst;
  for (int c = 0; c < copies; ++c) {
    src.push_back(g.edge_src + static_cast<int64_t>(c) * g.num_nodes);
    dst.push_back(g.edge_dst + static_cast<int64_t>(c) * g.num_nodes);
  }
  r.edge_src = torch::cat(src);
  r.edge_dst = torch::cat(dst);
  r.in_weight = g.in_weight.repeat({copies});
  r.out_weight = g.out_weight.repeat({copies});
  return r;
}

void normalise_by_max(std::vector<double>& column) {
  const double m = column.empty() ? 0 : *std::max_element(column.begin(), column.end());
  if (m > 0)
    for (double& x : column) x /= m;
}

OpFeatureColumns op_feature_columns(const OpGraph& graph, const Cluster& cluster) {
  const int n = graph.num_ops();
  const OpCostMatrix costs(graph, cluster);
  OpFeatureColumns columns;
  columns.cost.assign(n, 0);
  columns.out_size.assign(n, 0);
  columns.memory.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const Op& op = graph.op(i);
    columns.cost[i] = costs.mean_time_us(i);
    columns.out_size[i] = op.total_output_bytes();
    columns.memory[i] = op.param_bytes + op.total_output_bytes() + op.temp_bytes;
  }
  normalise_by_max(columns.cost);
  normalise_by_max(columns.out_size);
  normalise_by_max(columns.memory);
  return columns;
}

}  // namespace aware::rl
