#include "hw/gpu_work.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.h"
#include "core/op_graph.h"

namespace aware {

const char* gpu_precision_name(GpuPrecision precision) {
  switch (precision) {
    case GpuPrecision::kBf16: return "bf16";
    case GpuPrecision::kTf32: return "tf32";
    case GpuPrecision::kFp32: return "fp32";
  }
  return "?";
}

GpuPrecision parse_gpu_precision(const std::string& text, const std::string& owner) {
  if (text == "bf16") return GpuPrecision::kBf16;
  if (text == "tf32") return GpuPrecision::kTf32;
  if (text == "fp32") return GpuPrecision::kFp32;
  throw ConfigError(owner + ": precision must be bf16, tf32 or fp32, got '" + text + "'");
}

int gpu_element_bytes(GpuPrecision precision) { return precision == GpuPrecision::kBf16 ? 2 : 4; }

std::int64_t gpu_buffer_elements(const StepPlan& plan, int buffer) {
  if (buffer < 0 || buffer >= static_cast<int>(plan.buffers.size())) return 0;
  return static_cast<std::int64_t>(plan.buffers[buffer].bytes / 4);
}

namespace {

bool is_update(const std::string& type, int* slots) {
  static const std::map<std::string, int> kSlots = {
      {"ApplyGradientDescent", 0}, {"ApplyMomentum", 1}, {"ApplyRMSProp", 1}, {"ApplyAdam", 2}};
  const auto it = kSlots.find(type);
  if (it == kSlots.end()) return false;
  *slots = it->second;
  return true;
}

// A depthwise convolution's geometry from its shape (all of batch, in_channels,
// height, width, kernel_h, kernel_w, out_height, out_width; stride 1 unless
// given), or false.
bool depthwise_shape(const Op& op, DepthwiseShape* out) {
  DepthwiseShape d;
  if (op.type == "DepthwiseConv2dNative")
    d.role = DepthwiseShape::kForward;
  else if (op.type == "DepthwiseConv2dNativeBackpropInput")
    d.role = DepthwiseShape::kInputGrad;
  else if (op.type == "DepthwiseConv2dNativeBackpropFilter")
    d.role = DepthwiseShape::kFilterGrad;
  else
    return false;
  const auto value = [&](const char* key, double fallback) {
    const auto it = op.shape.find(key);
    return it == op.shape.end() ? fallback : it->second;
  };
  const auto whole = [](double x) { return x >= 1 ? static_cast<std::int64_t>(std::llround(x)) : 0; };
  d.n = whole(value("batch", 0));
  d.c = whole(value("in_channels", 0));
  d.h = whole(value("height", 0));
  d.w = whole(value("width", 0));
  d.kh = whole(value("kernel_h", 0));
  d.kw = whole(value("kernel_w", 0));
  d.stride = whole(value("stride", 1));
  d.oh = whole(value("out_height", 0));
  d.ow = whole(value("out_width", 0));
  if (d.n <= 0 || d.c <= 0 || d.h <= 0 || d.w <= 0 || d.kh <= 0 || d.kw <= 0 || d.stride <= 0 || d.oh <= 0 ||
      d.ow <= 0)
    return false;
  // The symmetric padding that gives the recorded output size (as the CPU's ATen kernels choose).
  d.pad_h = std::max<std::int64_t>(0, ((d.oh - 1) * d.stride + d.kh - d.h) / 2);
  d.pad_w = std::max<std::int64_t>(0, ((d.ow - 1) * d.stride + d.kw - d.w) / 2);
  *out = d;
  return true;
}

// The op's GEMM is the one its shape names (not a stand-in of equal FLOPs).
bool gemm_is_the_ops(const PlannedOp& p, const Op& op) {
  if (p.kind != KernelKind::kGemm) return false;
  const GemmShape s = gemm_from_shape(op);
  return s.m > 0 && s.m == p.gemm.m && s.n == p.gemm.n && s.k == p.gemm.k;
}

}  // namespace

GpuWorkPlan plan_gpu_work(const StepPlan& plan, GpuPrecision precision) {
  AWARE_CHECK(plan.graph != nullptr, "plan_gpu_work: the plan has no graph");
  const OpGraph& graph = *plan.graph;
  const size_t num_devices = plan.device_tasks.size();
  GpuWorkPlan work;
  work.precision = precision;
  work.ops.resize(plan.ops.size());
  work.real.assign(plan.ops.size(), 0);
  for (auto* v : {&work.scratch_a, &work.scratch_b, &work.scratch_c, &work.private_elements,
                  &work.fold_floats})
    v->assign(num_devices, 0);
  KernelCoverage& cov = work.coverage;
  cov.ops = graph.num_ops();
  std::map<std::string, int> fallbacks, categories;

  for (const PlannedOp& p : plan.ops) {
    const Op& op = graph.op(p.op);
    GpuOpWork& w = work.ops[p.op];
    const size_t d = static_cast<size_t>(p.device);
    cov.flops += op.flops;
    // The inputs that carry a tensor here, in edge order.
    std::vector<GpuTensor> inputs;
    for (int buffer : p.inputs)
      if (buffer >= 0 && gpu_buffer_elements(plan, buffer) > 0)
        inputs.push_back({buffer, gpu_buffer_elements(plan, buffer)});
    std::vector<GpuTensor> outputs;
    for (int buffer : p.outputs)
      if (buffer >= 0 && gpu_buffer_elements(plan, buffer) > 0)
        outputs.push_back({buffer, gpu_buffer_elements(plan, buffer)});
    double edge_bytes = 0;  // bytes the real work reads from in-edge buffers
    double read_bytes = 0;  // bytes it reads as inputs, from edges or scratch
    const double element = gpu_element_bytes(precision);
    // Two operands and a result (a GEMM's, a depthwise convolution's): the result
    // into the first output where it fits, scratch for what no tensor supplies.
    const auto finish_operands = [&](std::int64_t need_a, std::int64_t need_b, std::int64_t need_c) {
      if (!outputs.empty() && outputs[0].elements >= need_c) w.c_buffer = outputs[0].buffer;
      if (w.a_buffer < 0) work.scratch_a[d] = std::max(work.scratch_a[d], need_a);
      if (w.b_buffer < 0) work.scratch_b[d] = std::max(work.scratch_b[d], need_b);
      if (w.c_buffer < 0) work.scratch_c[d] = std::max(work.scratch_c[d], need_c);
      read_bytes = element * static_cast<double>(need_a + need_b);
      if (w.a_buffer >= 0) edge_bytes += element * static_cast<double>(need_a);
      if (w.b_buffer >= 0) edge_bytes += element * static_cast<double>(need_b);
    };

    int slots = 0;
    const auto params = op.shape.find("params");
    DepthwiseShape dw;
    if (depthwise_shape(op, &dw)) {
      w.kind = GpuWorkKind::kDepthwise;
      w.category = "depthwise";
      w.depthwise = dw;
      std::int64_t need_a = dw.input_elements(), need_b = dw.filter_elements(), need_c = dw.output_elements();
      if (dw.role == DepthwiseShape::kInputGrad) {
        need_a = dw.output_elements();
        need_c = dw.input_elements();
      } else if (dw.role == DepthwiseShape::kFilterGrad) {
        need_b = dw.output_elements();
        need_c = dw.filter_elements();
      }
      std::vector<char> used(inputs.size(), 0);
      const auto take = [&](std::int64_t need) {
        for (size_t i = 0; i < inputs.size(); ++i)
          if (!used[i] && inputs[i].elements >= need) {
            used[i] = 1;
            return inputs[i].buffer;
          }
        return -1;
      };
      // The larger operand first, so that it does not go to the smaller one's place.
      if (need_a >= need_b) {
        w.a_buffer = take(need_a);
        w.b_buffer = take(need_b);
      } else {
        w.b_buffer = take(need_b);
        w.a_buffer = take(need_a);
      }
      finish_operands(need_a, need_b, need_c);
    } else if (is_update(op.type, &slots) && params != op.shape.end() && params->second >= 1) {
      w.kind = GpuWorkKind::kUpdate;
      w.category = "update";
      w.slots = slots;
      const auto n = static_cast<std::int64_t>(params->second);
      w.private_elements = n * (1 + slots);
      // The gradient: the first input holding `params` elements, else the largest.
      GpuTensor grad;
      for (const GpuTensor& t : inputs)
        if (t.elements >= n) {
          grad = {t.buffer, n};
          break;
        }
      if (grad.buffer < 0)
        for (const GpuTensor& t : inputs)
          if (t.elements > grad.elements) grad = t;
      if (grad.buffer >= 0) {
        w.reads.push_back(grad);
        edge_bytes += element * static_cast<double>(grad.elements);
      }
      w.writes.push_back({-1, w.private_elements});  // the private tensor, read and written
      read_bytes = element * static_cast<double>(grad.elements + w.private_elements);
      work.private_elements[d] += w.private_elements;
    } else if (gemm_is_the_ops(p, op)) {
      w.kind = GpuWorkKind::kGemm;
      w.category = op.shape.count("filters") ? "conv-gemm" : "gemm";
      w.gemm = p.gemm;
      w.reps = p.gemm_reps;
      // A BatchMatMul's products are independent (attention's scores and context):
      // a strided batch, each with its own B, not one tall GEMM sharing B.
      const auto batch = op.shape.find("batch");
      if (op.type.rfind("BatchMatMul", 0) == 0 && batch != op.shape.end() && batch->second >= 2 &&
          op.shape.count("M")) {
        const auto count = static_cast<std::int64_t>(std::llround(batch->second));
        if (count >= 2 && w.gemm.m % count == 0) {
          w.batch = count;
          w.gemm.m /= count;
        }
      }
      const std::int64_t need_a = w.batch * w.gemm.m * w.gemm.k,
                         need_b = w.batch * w.gemm.k * w.gemm.n,
                         need_c = w.batch * w.gemm.m * w.gemm.n;
      // Operands in edge order: each the next input that holds it (an operand no
      // input holds takes nothing from the list).
      size_t next = 0;
      const auto take = [&](std::int64_t need) {
        for (size_t i = next; i < inputs.size(); ++i)
          if (inputs[i].elements >= need) {
            next = i + 1;
            return inputs[i].buffer;
          }
        return -1;
      };
      w.a_buffer = take(need_a);
      w.b_buffer = take(need_b);
      finish_operands(need_a, need_b, need_c);
    } else if (p.kind == KernelKind::kStream && (!inputs.empty() || !outputs.empty())) {
      w.kind = GpuWorkKind::kTraffic;
      w.reads = inputs;
      w.writes = outputs;
      std::int64_t largest_read = 0;
      for (const GpuTensor& t : inputs) {
        largest_read = std::max(largest_read, t.elements);
        read_bytes += element * static_cast<double>(t.elements);
      }
      edge_bytes = read_bytes;
      w.fold = !outputs.empty() && outputs[0].elements < largest_read;
      w.category = w.fold ? "reduction" : "elementwise";
      if (w.fold) work.fold_floats[d] = std::max(work.fold_floats[d], outputs[0].elements);
    } else {
      w.kind = GpuWorkKind::kSynthetic;
      w.category = "synthetic";
    }

    if (w.kind != GpuWorkKind::kSynthetic) {
      work.real[p.op] = 1;
      ++cov.real_ops;
      cov.real_flops += op.flops;
      cov.input_bytes += read_bytes;
      cov.input_bytes_from_edges += edge_bytes;
      ++categories[w.category];
    } else if (p.kind == KernelKind::kNone) {
      work.real[p.op] = 1;  // nothing to run either way
      ++cov.real_ops;
      cov.real_flops += op.flops;
    } else {
      ++fallbacks[op.type.empty() ? "(untyped)" : op.type];
      ++categories[w.category];
    }
  }
  for (const auto& [type, count] : fallbacks)
    cov.synthetic_types.push_back(type + " x" + std::to_string(count));
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [name, count] : categories) sorted.emplace_back(-count, name);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [count, name] : sorted)
    work.categories.push_back(name + " x" + std::to_string(-count));
  return work;
}

}  // namespace aware
