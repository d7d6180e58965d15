#include "core/op_graph.h"

#include <atomic>
#include <cmath>
#include <sstream>

#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware {
namespace {

std::atomic<std::uint64_t> g_next_revision{1};

std::string where(const OpGraph& graph) {
  return graph.source().empty() ? graph.name() : graph.source();
}

void check_number(const OpGraph& graph, const Op& op, const char* field, double value) {
  if (!std::isfinite(value) || value < 0) {
    std::ostringstream out;
    out << where(graph) << ": op '" << op.name << "': field '" << field
        << "' must be a finite non-negative number, got " << value;
    throw GraphError(out.str());
  }
}

}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kUpdate:
      return "update";
  }
  return "forward";
}

bool parse_phase(const std::string& text, Phase* phase) {
  if (text == "forward") {
    *phase = Phase::kForward;
  } else if (text == "backward") {
    *phase = Phase::kBackward;
  } else if (text == "update") {
    *phase = Phase::kUpdate;
  } else {
    return false;
  }
  return true;
}

double Op::total_output_bytes() const {
  double total = 0;
  for (double b : output_bytes) total += b;
  return total;
}

void OpGraph::touch() { revision_ = g_next_revision.fetch_add(1, std::memory_order_relaxed); }

void OpGraph::set_batch(double samples) {
  if (!std::isfinite(samples) || samples < 0) {
    throw GraphError(where(*this) + ": field 'batch' must be a finite number >= 0, got " +
                     std::to_string(samples));
  }
  batch_ = samples;
  touch();
}

int OpGraph::add_op(Op op) {
  if (op.name.empty()) {
    throw GraphError(where(*this) + ": op #" + std::to_string(ops_.size()) +
                     ": field 'name' is empty");
  }
  if (by_name_.count(op.name)) {
    throw GraphError(where(*this) + ": op '" + op.name + "': field 'name' is a duplicate");
  }
  const int id = num_ops();
  by_name_.emplace(op.name, id);
  ops_.push_back(std::move(op));
  in_edges_.emplace_back();
  out_edges_.emplace_back();
  touch();
  return id;
}

int OpGraph::add_edge(int src, int dst, int src_output, double bytes) {
  if (src < 0 || src >= num_ops() || dst < 0 || dst >= num_ops()) {
    throw GraphError(where(*this) + ": edge " + std::to_string(src) + " -> " +
                     std::to_string(dst) + " names an op that does not exist");
  }
  const Op& producer = ops_[src];
  if (src_output < 0) {
    throw GraphError(where(*this) + ": edge '" + producer.name + "' -> '" + ops_[dst].name +
                     "': field 'src_output' is negative");
  }
  if (bytes < 0) {
    if (src_output >= static_cast<int>(producer.output_bytes.size())) {
      throw GraphError(where(*this) + ": edge '" + producer.name + "' -> '" + ops_[dst].name +
                       "': output index " + std::to_string(src_output) + " but op has " +
                       std::to_string(producer.output_bytes.size()) + " outputs");
    }
    bytes = producer.output_bytes[src_output];
  }
  const int id = num_edges();
  edges_.push_back(Edge{src, dst, src_output, bytes});
  out_edges_[src].push_back(id);
  in_edges_[dst].push_back(id);
  touch();
  return id;
}

Op& OpGraph::mutable_op(int id) {
  touch();
  return ops_[id];
}

int OpGraph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

void OpGraph::validate() const {
  for (const Op& op : ops_) {
    check_number(*this, op, "flops", op.flops);
    check_number(*this, op, "bytes_accessed", op.bytes_accessed);
    check_number(*this, op, "param_bytes", op.param_bytes);
    check_number(*this, op, "temp_bytes", op.temp_bytes);
    for (double b : op.output_bytes) check_number(*this, op, "output_bytes", b);
    if (op.has_measured_cost()) check_number(*this, op, "compute_us", op.compute_us);
    if (!std::isfinite(op.compute_us)) check_number(*this, op, "compute_us", op.compute_us);
    for (const auto& [key, value] : op.shape) {
      if (!std::isfinite(value)) {
        throw GraphError(where(*this) + ": op '" + op.name + "': field 'shape." + key +
                         "' is not a finite number");
      }
    }
    if (op.stream != 0 && op.stream != 1) {
      throw GraphError(where(*this) + ": op '" + op.name +
                       "': field 'stream' must be 0 (compute) or 1 (communication), got " +
                       std::to_string(op.stream));
    }
    if (op.forward_of >= num_ops()) {
      throw GraphError(where(*this) + ": op '" + op.name +
                       "': field 'forward_of' names an op that does not exist");
    }
  }
  for (const Edge& e : edges_) {
    if (e.src < 0 || e.src >= num_ops() || e.dst < 0 || e.dst >= num_ops()) {
      throw GraphError(where(*this) + ": an edge names an op that does not exist");
    }
    if (e.src == e.dst) {
      throw GraphError(where(*this) + ": op '" + ops_[e.src].name +
                       "': an edge from the op to itself (fields 'src' and 'dst') makes a cycle");
    }
    if (!std::isfinite(e.bytes) || e.bytes < 0) {
      throw GraphError(where(*this) + ": edge '" + ops_[e.src].name + "' -> '" +
                       ops_[e.dst].name + "': field 'bytes' must be finite and non-negative");
    }
  }
  topological_order(*this);  // throws on a cycle, naming an op on it
}

double OpGraph::total_flops() const {
  double total = 0;
  for (const Op& op : ops_) total += op.flops;
  return total;
}

double OpGraph::total_param_bytes() const {
  double total = 0;
  for (const Op& op : ops_) total += op.param_bytes;
  return total;
}

}  // namespace aware
