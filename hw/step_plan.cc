#include "hw/step_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/units.h"

namespace aware {

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kNone: return "none";
    case KernelKind::kGemm: return "gemm";
    case KernelKind::kStream: return "stream";
    case KernelKind::kSpin: return "spin";
  }
  return "?";
}

namespace {

double shape_value(const Op& op, const char* key) {
  const auto it = op.shape.find(key);
  return it == op.shape.end() ? 0 : it->second;
}

std::int64_t dim(double value) {
  return value >= 1 ? static_cast<std::int64_t>(std::llround(value)) : 0;
}

double aligned(double bytes) { return std::ceil(bytes / kBufferAlignment) * kBufferAlignment; }

// Lifetimes and offsets (see make_step_plan).
void place_buffers(StepPlan& plan, bool reuse, bool in_order) {
  const OpGraph& graph = *plan.graph;
  const size_t num_devices = plan.device_tasks.size();
  plan.arena_bytes.assign(num_devices, 0);
  // Each task's position in its device's list.
  std::vector<int> op_pos(plan.ops.size(), -1), copy_pos(plan.copies.size(), -1);
  for (const auto& tasks : plan.device_tasks)
    for (size_t i = 0; i < tasks.size(); ++i)
      (tasks[i].is_copy ? copy_pos : op_pos)[tasks[i].index] = static_cast<int>(i);
  // Each buffer's writer, as the op whose end it follows (a copy: its producer's),
  // and its readers on its device.
  std::vector<int> writer(plan.buffers.size(), -1);
  std::vector<std::vector<int>> readers(plan.buffers.size());
  for (const PlannedOp& p : plan.ops) {
    for (int b : p.outputs)
      if (b >= 0) {
        plan.buffers[b].first = op_pos[p.op];
        plan.buffers[b].last = std::max(plan.buffers[b].last, op_pos[p.op]);
        writer[b] = p.op;
      }
    for (int b : p.inputs)
      if (b >= 0) {
        plan.buffers[b].last = std::max(plan.buffers[b].last, op_pos[p.op]);
        if (std::find(readers[b].begin(), readers[b].end(), p.op) == readers[b].end()) readers[b].push_back(p.op);
      }
  }
  std::vector<char> copied_in(plan.buffers.size(), 0);
  for (size_t c = 0; c < plan.copies.size(); ++c) {
    const PlannedCopy& copy = plan.copies[c];
    if (copy.dst_buffer >= 0) {
      plan.buffers[copy.dst_buffer].first = copy_pos[c];
      plan.buffers[copy.dst_buffer].last = std::max(plan.buffers[copy.dst_buffer].last, copy_pos[c]);
      writer[copy.dst_buffer] = copy.src_op;  // it lands after its producer ends
      copied_in[copy.dst_buffer] = 1;
    }
    if (copy.src_buffer >= 0 && copy.bytes > 0) plan.buffers[copy.src_buffer].held = true;
  }
  // Past this size the reachability table (n^2 / 8 bytes) is not worth it: hold all.
  constexpr int kMostOpsForReuse = 40000;
  reuse = reuse && (in_order || graph.num_ops() <= kMostOpsForReuse);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    PlannedBuffer& buffer = plan.buffers[b];
    if (buffer.first < 0) buffer.first = 0;  // written by nothing planned: from the start
    buffer.last = std::max(buffer.last, buffer.first);
    // A received tensor nothing reads, or one with no writer: kept whole.
    if (writer[b] < 0 || (copied_in[b] && readers[b].empty())) buffer.held = true;
    if (!reuse || buffer.held) {
      buffer.first = 0;
      buffer.last = static_cast<int>(plan.device_tasks[buffer.device].size());
      buffer.held = true;
    }
  }
  // Buffer y may take buffer x's memory only when every use of x comes first:
  // for a backend that runs its list in order, every use earlier in the list;
  // otherwise when the step's dependencies order it: each reader of x (x's writer
  // when nothing reads it) is an ancestor of y's writer. Either way no backend
  // overwrites a tensor something still has to read, and reuse adds no wait.
  const Reachability reach = reuse && !in_order ? Reachability(graph) : Reachability(OpGraph("none"));
  const auto done_before = [&](int x, int y) {
    const PlannedBuffer &a = plan.buffers[x], &b = plan.buffers[y];
    if (a.held || b.held || a.last >= b.first) return false;
    if (in_order) return true;  // the list runs every use of x before y's writer
    const int w = writer[y];
    const auto before = [&](int op) { return op == w ? copied_in[y] != 0 : reach.reaches(op, w); };
    if (readers[x].empty()) return before(writer[x]);
    for (int r : readers[x])
      if (!before(r)) return false;
    return true;
  };
  // Per device, greedy by size: each buffer (largest first) at the lowest offset
  // where it overlaps no placed buffer it may not share memory with.
  std::vector<std::vector<int>> on_device(num_devices);
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].bytes > 0) on_device[plan.buffers[b].device].push_back(static_cast<int>(b));
  for (size_t d = 0; d < num_devices; ++d) {
    std::vector<int>& ids = on_device[d];
    std::stable_sort(ids.begin(), ids.end(), [&](int x, int y) {
      const PlannedBuffer &a = plan.buffers[x], &b = plan.buffers[y];
      if (a.bytes != b.bytes) return a.bytes > b.bytes;
      return a.first < b.first;
    });
    std::vector<int> placed;  // by ascending offset
    for (int id : ids) {
      PlannedBuffer& b = plan.buffers[id];
      const double size = aligned(b.bytes);
      double offset = 0;
      for (int other : placed) {
        const PlannedBuffer& x = plan.buffers[other];
        if (done_before(other, id) || done_before(id, other)) continue;  // may share memory
        if (x.offset >= offset + size) break;                           // fits in the gap before x
        offset = std::max(offset, x.offset + aligned(x.bytes));
      }
      b.offset = offset;
      size_t insert_at = placed.size();
      for (size_t i = 0; i < placed.size(); ++i)
        if (plan.buffers[placed[i]].offset > offset) {
          insert_at = i;
          break;
        }
      placed.insert(placed.begin() + static_cast<std::ptrdiff_t>(insert_at), id);
      plan.arena_bytes[d] = std::max(plan.arena_bytes[d], offset + size);
    }
  }
}

}  // namespace

GemmShape gemm_from_shape(const Op& op) {
  GemmShape s;
  if (op.shape.empty()) return s;
  const double batch = std::max(1.0, shape_value(op, "batch"));
  if (op.shape.count("M") && op.shape.count("N") && op.shape.count("K")) {
    s.m = dim(shape_value(op, "M") * batch);
    s.n = dim(shape_value(op, "N"));
    s.k = dim(shape_value(op, "K"));
  } else if (op.shape.count("filters") && op.shape.count("out_height")) {
    // A convolution as an implicit GEMM: one row per output pixel.
    s.m = dim(batch * shape_value(op, "out_height") * shape_value(op, "out_width"));
    s.n = dim(shape_value(op, "filters"));
    s.k = dim(shape_value(op, "in_channels") * shape_value(op, "kernel_h") *
              shape_value(op, "kernel_w"));
  } else if (op.shape.count("hidden") && op.shape.count("input")) {
    // An LSTM cell: the four gates as one GEMM over [input, hidden].
    s.m = dim(batch);
    s.n = dim(4 * shape_value(op, "hidden"));
    s.k = dim(shape_value(op, "input") + shape_value(op, "hidden"));
  }
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) s = GemmShape{};
  return s;
}

GemmShape gemm_of_flops(double flops) {
  const std::int64_t side = std::max<std::int64_t>(1, std::llround(std::cbrt(flops / 2)));
  return {side, side, side};
}

std::vector<std::pair<int, PlannedTask>> StepPlan::issue_order() const {
  std::vector<std::pair<int, PlannedTask>> all;
  for (int d = 0; d < static_cast<int>(device_tasks.size()); ++d)
    for (const PlannedTask& t : device_tasks[d]) all.emplace_back(d, t);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    if (a.second.key != b.second.key) return a.second.key < b.second.key;
    if (a.second.is_copy != b.second.is_copy) return !a.second.is_copy;
    return a.first < b.first;
  });
  return all;
}

StepPlan make_step_plan(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                        const StepPlanOptions& options) {
  check_placement(graph, cluster, placement);
  const int n = graph.num_ops();
  const int num_devices = cluster.num_devices();
  const std::vector<int> rank = topological_rank(graph);

  StepPlan plan;
  plan.graph = &graph;
  plan.ops.resize(n);
  plan.device_tasks.resize(num_devices);
  plan.gemm_scratch.assign(num_devices, GemmShape{});
  plan.stream_scratch_bytes.assign(num_devices, 0);
  plan.planned_bytes.assign(num_devices, 0);
  std::vector<double> max_temp(num_devices, 0);
  std::vector<std::string> oversized;  // kernels over max_kernel_bytes

  // Kernels and output buffers.
  for (int id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    PlannedOp& p = plan.ops[id];
    p.op = id;
    p.name = op.name;
    p.device = placement[id];
    const int d = p.device;
    if (op.flops > 0) {
      const GemmShape from_shape = gemm_from_shape(op);
      const double ratio = from_shape.m > 0 ? op.flops / from_shape.flops() : 0;
      if (from_shape.m > 0 && ratio >= 0.5) {
        p.kind = KernelKind::kGemm;
        p.gemm = from_shape;
        p.gemm_reps = std::max(1, static_cast<int>(std::lround(ratio)));
      } else if (from_shape.m > 0 || op.flops >= options.gemm_intensity * op.bytes_accessed) {
        p.kind = KernelKind::kGemm;
        p.gemm = gemm_of_flops(op.flops);
        p.gemm_reps = 1;
        if (from_shape.m > 0) p.why = "shape's GEMM does not match the op's FLOPs; a GEMM of equal FLOPs";
      }
    }
    if (p.kind == KernelKind::kNone && op.bytes_accessed > 0) {
      p.kind = KernelKind::kStream;
      p.stream_bytes = op.bytes_accessed;
    }
    if (p.kind == KernelKind::kNone && op.has_measured_cost() && op.compute_us > 0) {
      p.kind = KernelKind::kSpin;
      p.spin_us = op.compute_us;
      p.why = "no FLOPs or bytes: busy for its measured " + std::to_string(op.compute_us) + " us";
      ++plan.ops_spinning;
    }
    if (p.kind == KernelKind::kNone) {
      p.why = "no shape, FLOPs, bytes or measured cost: runs nothing";
      ++plan.ops_running_nothing;
    }
    if (p.kind == KernelKind::kGemm) {
      GemmShape& s = plan.gemm_scratch[d];
      // Scratch holds the largest A, B and C separately (as m*k, k*n, m*n).
      s.m = std::max(s.m, p.gemm.m * p.gemm.k);
      s.n = std::max(s.n, p.gemm.k * p.gemm.n);
      s.k = std::max(s.k, p.gemm.m * p.gemm.n);
      if (p.gemm.bytes() > options.max_kernel_bytes) oversized.push_back(op.name);
    } else if (p.kind == KernelKind::kStream) {
      plan.stream_scratch_bytes[d] = std::max(plan.stream_scratch_bytes[d], p.stream_bytes);
      if (p.stream_bytes > options.max_kernel_bytes) oversized.push_back(op.name);
    }
    p.outputs.assign(op.output_bytes.size(), -1);
    for (size_t o = 0; o < op.output_bytes.size(); ++o) {
      if (op.output_bytes[o] <= 0) continue;
      p.outputs[o] = static_cast<int>(plan.buffers.size());
      plan.buffers.push_back({d, op.output_bytes[o]});
    }
    plan.planned_bytes[d] += op.param_bytes;
    max_temp[d] = std::max(max_temp[d], op.temp_bytes);
  }

  // Dependencies and copies: one copy per (producer output, consumer device).
  std::map<std::tuple<int, int, int>, int> copy_of;  // (src op, output, dst device) -> copy
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    const int sd = placement[edge.src];
    const int dd = placement[edge.dst];
    PlannedOp& consumer = plan.ops[edge.dst];
    if (sd == dd) {
      if (std::find(consumer.wait_ops.begin(), consumer.wait_ops.end(), edge.src) ==
          consumer.wait_ops.end())
        consumer.wait_ops.push_back(edge.src);
      continue;
    }
    const auto key = std::make_tuple(edge.src, edge.src_output, dd);
    auto it = copy_of.find(key);
    if (it == copy_of.end()) {
      PlannedCopy c;
      c.src_op = edge.src;
      c.src_output = edge.src_output;
      c.src_device = sd;
      c.dst_device = dd;
      c.bytes = edge.bytes;
      const auto& outs = plan.ops[edge.src].outputs;
      c.src_buffer = edge.src_output < static_cast<int>(outs.size()) ? outs[edge.src_output] : -1;
      it = copy_of.emplace(key, static_cast<int>(plan.copies.size())).first;
      plan.copies.push_back(c);
    } else {
      plan.copies[it->second].bytes = std::max(plan.copies[it->second].bytes, edge.bytes);
    }
    if (std::find(consumer.wait_copies.begin(), consumer.wait_copies.end(), it->second) ==
        consumer.wait_copies.end())
      consumer.wait_copies.push_back(it->second);
  }
  for (PlannedCopy& c : plan.copies) {
    if (c.bytes > 0) {
      // The producer's output buffer holds at least what the edge carries.
      if (c.src_buffer < 0) {
        auto& outs = plan.ops[c.src_op].outputs;
        if (static_cast<int>(outs.size()) <= c.src_output) outs.resize(c.src_output + 1, -1);
        if (outs[c.src_output] < 0) {
          outs[c.src_output] = static_cast<int>(plan.buffers.size());
          plan.buffers.push_back({c.src_device, 0});
        }
        c.src_buffer = outs[c.src_output];
      }
      plan.buffers[c.src_buffer].bytes = std::max(plan.buffers[c.src_buffer].bytes, c.bytes);
      c.dst_buffer = static_cast<int>(plan.buffers.size());
      plan.buffers.push_back({c.dst_device, c.bytes});
    }
    plan.bytes_moved += c.bytes;
  }

  // What each op reads, edge by edge.
  for (int id = 0; id < n; ++id) {
    PlannedOp& p = plan.ops[id];
    for (int e : graph.in_edges(id)) {
      const Edge& edge = graph.edge(e);
      int buffer = -1;
      if (placement[edge.src] == p.device) {
        const auto& outs = plan.ops[edge.src].outputs;
        buffer = edge.src_output < static_cast<int>(outs.size()) ? outs[edge.src_output] : -1;
      } else {
        const auto it = copy_of.find(std::make_tuple(edge.src, edge.src_output, p.device));
        if (it != copy_of.end()) buffer = plan.copies[it->second].dst_buffer;
      }
      p.inputs.push_back(buffer);
    }
  }

  // Task lists in key order.
  for (int id = 0; id < n; ++id)
    plan.device_tasks[plan.ops[id].device].push_back({false, id, static_cast<double>(rank[id])});
  for (int c = 0; c < static_cast<int>(plan.copies.size()); ++c)
    plan.device_tasks[plan.copies[c].dst_device].push_back(
        {true, c, rank[plan.copies[c].src_op] + 0.5});
  for (auto& tasks : plan.device_tasks)
    std::stable_sort(tasks.begin(), tasks.end(),
                     [](const PlannedTask& a, const PlannedTask& b) { return a.key < b.key; });

  place_buffers(plan, options.reuse_memory, options.in_order);
  for (int d = 0; d < num_devices; ++d) plan.planned_bytes[d] += plan.arena_bytes[d];
  for (int d = 0; d < num_devices; ++d) {
    const GemmShape& s = plan.gemm_scratch[d];
    plan.planned_bytes[d] += 4.0 * static_cast<double>(s.m + s.n + s.k) +
                             plan.stream_scratch_bytes[d] + max_temp[d];
  }
  if (!oversized.empty()) {
    plan.feasible = false;
    plan.infeasible_reason = "op '" + graph.op(graph.find(oversized.front())).name +
                             "' needs a kernel over " + format_bytes(options.max_kernel_bytes, BytesStyle::kGigabytes) +
                             " of buffers";
    return plan;
  }
  for (int d = 0; d < num_devices; ++d) {
    const Device& dev = cluster.device(d);
    if (dev.memory_bytes > 0 && plan.planned_bytes[d] > dev.memory_bytes) {
      plan.feasible = false;
      plan.infeasible_reason = "out of memory on " + dev.name + ": the step's buffers need " +
                               format_bytes(plan.planned_bytes[d], BytesStyle::kGigabytes) + " of " +
                               format_bytes(dev.memory_bytes, BytesStyle::kGigabytes);
      break;
    }
  }
  return plan;
}

}  // namespace aware
