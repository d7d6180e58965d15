#include "datasets/builder.h"

#include <set>
#include <utility>

#include "core/errors.h"

namespace aware::datasets_detail {
namespace {

struct OptimizerInfo {
  const char* type;
  double slots;           // optimizer state tensors per parameter tensor
  double flops_per_elem;  // arithmetic per parameter element
};

OptimizerInfo optimizer_info(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return {"ApplyGradientDescent", 0, 2};
    case Optimizer::kMomentum:
      return {"ApplyMomentum", 1, 4};
    case Optimizer::kRmsProp:
      return {"ApplyRMSProp", 2, 8};
    case Optimizer::kAdam:
      return {"ApplyAdam", 2, 12};
  }
  return {"ApplyGradientDescent", 0, 2};
}

double product(const std::vector<double>& dims) {
  double n = 1;
  for (double d : dims) n *= d;
  return n;
}

}  // namespace

double Tensor::elements() const { return product(dims); }

GraphBuilder::GraphBuilder(std::string graph_name, Optimizer optimizer)
    : graph_(std::move(graph_name)), optimizer_(optimizer) {}

void GraphBuilder::set_block(std::string block, int layer) {
  block_ = std::move(block);
  layer_ = layer;
}

std::string GraphBuilder::unique_name(const std::string& base) {
  const std::string full = prefix_.empty() ? base : prefix_ + "/" + base;
  int& count = name_counts_[full];
  std::string name = count == 0 ? full : full + "_" + std::to_string(count);
  ++count;
  // A generated "x_1" could collide with a user-chosen "x_1"; keep counting until free.
  while (graph_.find(name) >= 0) name = full + "_" + std::to_string(count++);
  return name;
}

Tensor GraphBuilder::input(const std::string& name, std::vector<double> dims) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "Placeholder";
  spec.output_dims = {dims};
  return add1(spec);
}

Tensor GraphBuilder::variable(const std::string& name, std::vector<double> dims) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "VariableV2";
  spec.output_dims = {dims};
  const Tensor out = add1(spec);
  Op& op = graph_.mutable_op(out.op);
  op.param_bytes = out.bytes();
  op.shape["params"] = out.elements();
  Record& record = records_.back();
  record.variable = true;
  record.trainable_path = true;
  return out;
}

std::vector<Tensor> GraphBuilder::add(const ForwardSpec& spec) {
  AWARE_CHECK(!spec.output_dims.empty(), "forward op '" + spec.name + "' has no outputs");
  Op op;
  op.name = unique_name(spec.name);
  op.type = spec.type;
  op.phase = Phase::kForward;
  op.flops = spec.flops;
  op.temp_bytes = spec.temp_bytes;
  op.shape = spec.shape;
  op.block = block_;
  op.layer = layer_;
  double bytes = 0;
  for (const Tensor& in : spec.inputs) bytes += in.bytes();
  Record record;
  record.inputs = spec.inputs;
  record.grads = spec.grads;
  record.passthrough = spec.passthrough;
  const int id = graph_.num_ops();
  for (std::size_t i = 0; i < spec.output_dims.size(); ++i) {
    Tensor out{id, static_cast<int>(i), spec.output_dims[i]};
    AWARE_CHECK(out.elements() > 0, "forward op '" + op.name + "' has an empty output");
    op.output_bytes.push_back(out.bytes());
    bytes += out.bytes();
    record.outputs.push_back(std::move(out));
  }
  op.bytes_accessed = spec.type == "VariableV2" ? 0 : bytes;
  if (spec.bytes_accessed >= 0) op.bytes_accessed = spec.bytes_accessed;
  for (const Tensor& in : spec.inputs) {
    AWARE_CHECK(in.op >= 0 && in.op < id, "forward op '" + op.name + "' reads an unknown tensor");
    if (records_[in.op].trainable_path) record.trainable_path = true;
  }
  graph_.add_op(std::move(op));
  // A tensor read twice by one op is one edge: the bytes move once.
  std::set<std::pair<int, int>> seen;
  for (const Tensor& in : spec.inputs) {
    if (seen.insert({in.op, in.output}).second) graph_.add_edge(in.op, id, in.output, in.bytes());
  }
  records_.push_back(std::move(record));
  contributions_.emplace_back(spec.output_dims.size());
  return records_.back().outputs;
}

int GraphBuilder::add_backward_op(Op op, int forward_of) {
  const Op& fwd = graph_.op(forward_of);
  op.forward_of = forward_of;
  op.block = fwd.block;
  op.layer = fwd.layer;
  if (op.shape.empty()) op.shape = fwd.shape;
  return graph_.add_op(std::move(op));
}

GraphBuilder::GradRef GraphBuilder::output_gradient(int fwd, int output) {
  std::vector<GradRef>& parts = contributions_[fwd][output];
  if (parts.empty()) return {-1, 0, 0};
  if (parts.size() == 1) return parts[0];
  const Tensor& out = records_[fwd].outputs[output];
  const std::string base =
      graph_.op(fwd).name + "/grad_sum" + (output == 0 ? "" : std::to_string(output));
  if (records_[fwd].variable && parts.size() > 2) {
    // A weight shared across many steps: accumulate in order, one add per step,
    // as the unrolled frameworks do, instead of holding every partial gradient.
    GradRef acc = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) {
      Op op;
      op.name = base + "_" + std::to_string(i);
      op.type = "AccumulateGrad";
      op.phase = Phase::kBackward;
      op.flops = out.elements();
      op.bytes_accessed = acc.bytes + parts[i].bytes + out.bytes();
      op.output_bytes = {out.bytes()};
      const int id = add_backward_op(std::move(op), fwd);
      graph_.add_edge(acc.op, id, acc.output, acc.bytes);
      graph_.add_edge(parts[i].op, id, parts[i].output, parts[i].bytes);
      acc = {id, 0, out.bytes()};
    }
    return acc;
  }
  Op op;
  op.name = base;
  op.type = "AddN";
  op.phase = Phase::kBackward;
  op.flops = static_cast<double>(parts.size() - 1) * out.elements();
  double bytes = out.bytes();
  for (const GradRef& part : parts) bytes += part.bytes;
  op.bytes_accessed = bytes;
  op.output_bytes = {out.bytes()};
  const int id = add_backward_op(std::move(op), fwd);
  std::set<std::pair<int, int>> seen;
  for (const GradRef& part : parts) {
    if (seen.insert({part.op, part.output}).second) {
      graph_.add_edge(part.op, id, part.output, part.bytes);
    }
  }
  return {id, 0, out.bytes()};
}

namespace {
thread_local double g_element_bytes = kFloatBytes;
}  // namespace

double element_bytes() { return g_element_bytes; }
ElementBytes::ElementBytes(double bytes) : saved_(g_element_bytes) { g_element_bytes = bytes; }
ElementBytes::~ElementBytes() { g_element_bytes = saved_; }

void GraphBuilder::add_update(int var, const GradRef& grad) {
  const OptimizerInfo info = optimizer_info(optimizer_);
  const Tensor& weights = records_[var].outputs[0];
  Op op;
  op.name = graph_.op(var).name + "/" + info.type;
  op.type = info.type;
  op.phase = Phase::kUpdate;
  op.flops = info.flops_per_elem * weights.elements();
  // Reads the gradient; reads and writes the weights and each slot. In mixed
  // precision the slots and an fp32 master copy of the weights are the state
  // (ZeRO's K = 12 bytes per parameter for Adam: master, momentum, variance).
  const bool mixed = element_bytes() < kFloatBytes;
  const double state = mixed ? (info.slots + 1) * weights.elements() * kFloatBytes : info.slots * weights.bytes();
  op.bytes_accessed = grad.bytes + 2 * weights.bytes() + 2 * state;
  op.param_bytes = state;
  op.output_bytes = {0};  // updates in place
  op.shape = {{"params", weights.elements()}};
  const int id = add_backward_op(std::move(op), var);
  graph_.mutable_op(id).phase = Phase::kUpdate;
  graph_.add_edge(var, id, 0, weights.bytes());
  graph_.add_edge(grad.op, id, grad.output, grad.bytes);
}

OpGraph GraphBuilder::finish(const Tensor& loss) {
  const int num_forward = graph_.num_ops();
  AWARE_CHECK(loss.op >= 0 && loss.op < num_forward, "loss is not a forward op");
  // The seed of back-propagation: d loss / d loss = 1.
  {
    Op op;
    op.name = graph_.op(loss.op).name + "/grad_seed";
    op.type = "Fill";
    op.phase = Phase::kBackward;
    op.flops = 0;
    op.bytes_accessed = loss.bytes();
    op.output_bytes = {loss.bytes()};
    const int id = add_backward_op(std::move(op), loss.op);
    graph_.mutable_op(id).shape.clear();
    contributions_[loss.op][loss.output].push_back({id, 0, loss.bytes()});
  }
  for (int fwd = num_forward - 1; fwd >= 0; --fwd) {
    const Record& record = records_[fwd];
    if (!record.trainable_path) continue;
    std::vector<GradRef> out_grads;
    for (std::size_t o = 0; o < record.outputs.size(); ++o) {
      const GradRef g = output_gradient(fwd, static_cast<int>(o));
      if (g.op >= 0) out_grads.push_back(g);
    }
    if (record.variable) {
      AWARE_CHECK(!out_grads.empty(),
                  "variable '" + graph_.op(fwd).name + "' does not reach the loss");
      add_update(fwd, out_grads[0]);
      continue;
    }
    if (out_grads.empty()) continue;  // does not reach the loss
    auto needs_grad = [&](int input) { return records_[record.inputs[input].op].trainable_path; };
    for (int input : record.passthrough) {
      if (!needs_grad(input)) continue;
      const Tensor& in = record.inputs[input];
      const GradRef& g = out_grads[0];
      contributions_[in.op][in.output].push_back({g.op, g.output, g.bytes});
    }
    for (const GradSpec& spec : record.grads) {
      std::vector<int> produced;
      std::vector<double> produced_bytes;
      for (std::size_t k = 0; k < spec.grad_of.size(); ++k) {
        const int input = spec.grad_of[k];
        if (!needs_grad(input)) continue;
        produced.push_back(input);
        produced_bytes.push_back(k < spec.grad_bytes.size() ? spec.grad_bytes[k]
                                                            : record.inputs[input].bytes());
      }
      if (produced.empty()) continue;
      Op op;
      op.name = graph_.op(fwd).name + "/" + spec.suffix;
      op.type = spec.type;
      op.phase = Phase::kBackward;
      op.flops = spec.flops;
      op.temp_bytes = spec.temp_bytes;
      op.output_bytes = produced_bytes;
      double bytes = 0;
      for (const GradRef& g : out_grads) bytes += g.bytes;
      for (int input : spec.reads) bytes += record.inputs[input].bytes();
      if (spec.reads_output) bytes += record.outputs[0].bytes();
      for (double b : produced_bytes) bytes += b;
      op.bytes_accessed = bytes;
      const int id = add_backward_op(std::move(op), fwd);
      std::set<std::pair<int, int>> seen;
      auto connect = [&](int src, int src_output, double edge_bytes) {
        if (seen.insert({src, src_output}).second) {
          graph_.add_edge(src, id, src_output, edge_bytes);
        }
      };
      for (const GradRef& g : out_grads) connect(g.op, g.output, g.bytes);
      for (int input : spec.reads) {
        const Tensor& in = record.inputs[input];
        connect(in.op, in.output, in.bytes());
      }
      if (spec.reads_output) connect(fwd, 0, record.outputs[0].bytes());
      for (std::size_t k = 0; k < produced.size(); ++k) {
        const Tensor& in = record.inputs[produced[k]];
        contributions_[in.op][in.output].push_back({id, static_cast<int>(k), produced_bytes[k]});
      }
    }
  }
  graph_.validate();
  return std::move(graph_);
}

}  // namespace aware::datasets_detail
