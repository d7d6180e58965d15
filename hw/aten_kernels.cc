// ATen kernels for the CPU executor (hw/op_kernels.h): each op of the step runs
// the ATen function a framework would call for its type, at its shapes, on the
// tensors its producers wrote. The vocabulary is the zoo's (datasets/layers.cc:
// TensorFlow's op names) and the importers' where they record the same shapes
// (MatMul's m/n/k); an op of another type, or without the shape its kernel needs,
// keeps the synthetic work and is counted as such (KernelCoverage).
//
// Where the graph does not say something a kernel needs, we choose, and say so:
//  - padding: the symmetric padding that gives the recorded output size (SAME
//    padding may be one pixel asymmetric in TensorFlow; ATen pads both sides);
//  - inputs: for each tensor the kernel reads, in the order it asks, an in-edge
//    buffer not yet taken that holds exactly its bytes, else the first (in edge
//    order) that holds enough; an input no edge supplies (a weight the graph's
//    backward op does not list, class labels) is a stand-in shared by every op of
//    the device that lacks one of that size (the parameter exists once); what
//    the kernel keeps (optimizer slots, saved statistics) is private to the op;
//  - values: buffers start as zeros, private tensors as small uniform values;
//    denormals are flushed (a denormal would slow a kernel down, a framework's
//    data has none);
//  - results land in the op's output buffers (the first output first); a result
//    larger than the buffer is cut to it, a smaller one fills its front;
//  - optimizer updates use learning rate 1e-6 so that repeated steps keep values
//    finite; their cost does not depend on it.
#include "hw/aten_kernels.h"
#include "hw/aten_allocator.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "core/op_graph.h"
#include "hw/executor.h"
#include "hw/op_kernels.h"

namespace aware {

namespace {

using at::Tensor;

// ---------------------------------------------------------------- shapes

double shape_of(const Op& op, std::initializer_list<const char*> keys, double fallback = 0) {
  for (const char* key : keys) {
    const auto it = op.shape.find(key);
    if (it != op.shape.end()) return it->second;
  }
  return fallback;
}

std::int64_t whole(double v) { return v >= 1 ? static_cast<std::int64_t>(std::llround(v)) : 0; }

// A convolution or pooling window as the zoo records it.
struct Window {
  std::int64_t n = 0, c = 0, h = 0, w = 0, f = 0, kh = 0, kw = 0, s = 1, ph = 0, pw = 0, oh = 0, ow = 0;
  bool ok() const { return n > 0 && c > 0 && h > 0 && w > 0 && kh > 0 && kw > 0 && s > 0 && oh > 0 && ow > 0; }
};

Window window_of(const Op& op) {
  Window x;
  x.n = whole(shape_of(op, {"batch"}));
  x.c = whole(shape_of(op, {"in_channels"}));
  x.h = whole(shape_of(op, {"height"}));
  x.w = whole(shape_of(op, {"width"}));
  x.f = whole(shape_of(op, {"filters"}));
  x.kh = whole(shape_of(op, {"kernel_h"}));
  x.kw = whole(shape_of(op, {"kernel_w"}));
  x.s = std::max<std::int64_t>(1, whole(shape_of(op, {"stride"}, 1)));
  const std::int64_t oh = whole(shape_of(op, {"out_height"}));
  const std::int64_t ow = whole(shape_of(op, {"out_width"}));
  // The symmetric padding that gives the recorded output size, then the size
  // ATen gives with it (what the kernels' tensors are shaped by).
  x.ph = std::max<std::int64_t>(0, ((oh - 1) * x.s + x.kh - x.h + 1) / 2);
  x.pw = std::max<std::int64_t>(0, ((ow - 1) * x.s + x.kw - x.w + 1) / 2);
  x.ph = std::min(x.ph, x.kh / 2);
  x.pw = std::min(x.pw, x.kw / 2);
  x.oh = (x.h + 2 * x.ph - x.kh) / x.s + 1;
  x.ow = (x.w + 2 * x.pw - x.kw) / x.s + 1;
  if (oh <= 0 || ow <= 0) x.oh = 0;
  return x;
}

bool is_any(const std::string& type, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (type == n) return true;
  return false;
}

// ---------------------------------------------------------------- the kernels

class AtenKernels final : public OpKernels {
 public:
  AtenKernels() { install_counting_allocator(); }
  ~AtenKernels() override { release(); }

  std::string name() const override { return "aten"; }

  void prepare(const StepPlan& plan, const std::vector<void*>& buffers) override {
    release();
    if (plan.graph == nullptr) throw HardwareError("aten kernels: the plan has no graph");
    const OpGraph& graph = *plan.graph;
    previous_threads_ = at::get_num_threads();
    at::set_num_threads(1);
    threads_set_ = true;
    torch::manual_seed(1);
    const int devices = static_cast<int>(plan.device_tasks.size());
    held_.assign(static_cast<size_t>(devices), 0.0);
    reset_counted_bytes(devices);
    kernels_.assign(plan.ops.size(), {});
    coverage_ = KernelCoverage{};
    coverage_.ops = graph.num_ops();
    std::map<std::string, int> fallbacks;
    at::NoGradGuard no_grad;
    for (const PlannedOp& p : plan.ops) {
      const Op& op = graph.op(p.op);
      coverage_.flops += op.flops;
      Builder b{*this, plan, buffers, p, op};
      bool real = false;
      try {
        real = build(b);
      } catch (const c10::Error& e) {
        throw HardwareError("aten kernels: op '" + op.name + "' (" + op.type + "): " + first_line(e.what()));
      }
      if (real) {
        ++coverage_.real_ops;
        coverage_.real_flops += op.flops;
      } else if (op.flops > 0 || op.bytes_accessed > 0 || op.compute_us > 0) {
        ++fallbacks[op.type.empty() ? "(untyped)" : op.type];
      } else {
        ++coverage_.real_ops;  // nothing to run either way
      }
    }
    for (const auto& [type, count] : fallbacks)
      coverage_.synthetic_types.push_back(type + " x" + std::to_string(count));
  }

  bool has(int op) const override { return op >= 0 && op < static_cast<int>(kernels_.size()) && kernels_[op]; }

  void run(int op) override {
    try {
      at::NoGradGuard no_grad;
      kernels_[op]();
    } catch (const c10::Error& e) {
      throw HardwareError("aten kernel: " + first_line(e.what()));
    }
  }

  void bind_thread(int device) override {
    count_allocations_on(device);
    at::globalContext().setFlushDenormal(true);
  }

  KernelCoverage coverage() const override { return coverage_; }

  std::vector<double> peak_bytes() const override {
    std::vector<double> out(held_.size(), 0);
    for (size_t d = 0; d < held_.size(); ++d)
      out[d] = held_[d] + counted_peak_bytes(static_cast<int>(d));
    return out;
  }

  void release() override {
    kernels_.clear();
    private_.clear();
    stand_ins_.clear();
    if (threads_set_) at::set_num_threads(previous_threads_);
    threads_set_ = false;
  }

 private:
  static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

  // Hands out an op's inputs and outputs as tensors over the plan's buffers.
  struct Builder {
    AtenKernels& self;
    const StepPlan& plan;
    const std::vector<void*>& buffers;
    const PlannedOp& p;
    const Op& op;
    std::vector<char> taken = std::vector<char>(p.inputs.size(), 0);

    // An in-edge buffer not yet taken that holds exactly `sizes` floats, else
    // the first one (in edge order) that holds at least that many, else a
    // private tensor. Exact first: a gradient op's edges need not come in the
    // order its kernel reads them (a filter gradient's input and output gradient).
    Tensor in(at::IntArrayRef sizes) {
      const double need = 4.0 * static_cast<double>(c10::multiply_integers(sizes));
      self.coverage_.input_bytes += need;
      int pick = -1;
      for (int pass = 0; pass < 2 && pick < 0; ++pass)
        for (size_t i = 0; i < p.inputs.size() && pick < 0; ++i) {
          const int b = p.inputs[i];
          if (taken[i] || b < 0 || buffers[b] == nullptr) continue;
          const double bytes = plan.buffers[b].bytes;
          if (pass == 0 ? bytes == need : bytes >= need) pick = static_cast<int>(i);
        }
      if (pick < 0) return stand_in(sizes);
      taken[static_cast<size_t>(pick)] = 1;
      self.coverage_.input_bytes_from_edges += need;
      return at::from_blob(buffers[p.inputs[static_cast<size_t>(pick)]], sizes, at::kFloat);
    }
    // An input no edge supplies (most often a weight the graph's backward op
    // does not list: an RNN cell's gradient reads the kernel its forward read):
    // one tensor per device and size, shared by every op that lacks the same,
    // as the parameter it stands for exists once. Kernels only read it (an
    // optimizer update may change its values, which no one checks).
    Tensor stand_in(at::IntArrayRef sizes) {
      const std::int64_t count = c10::multiply_integers(sizes);
      auto& shared = self.stand_ins_[{p.device, count}];
      if (!shared.defined()) shared = own({count});
      return shared.view(sizes);
    }
    // A private tensor of small values, held until release().
    Tensor own(at::IntArrayRef sizes, double scale = 0.05) {
      Tensor t = at::rand(sizes, at::kFloat).mul_(scale);
      self.private_.push_back(t);
      self.held_[p.device] += 4.0 * static_cast<double>(t.numel());
      return t;
    }
    // Output `o`'s buffer as a flat float tensor (empty when it has none).
    Tensor out(size_t o) {
      if (o >= p.outputs.size() || p.outputs[o] < 0 || buffers[p.outputs[o]] == nullptr) return {};
      const auto count = static_cast<std::int64_t>(plan.buffers[p.outputs[o]].bytes / 4);
      return count > 0 ? at::from_blob(buffers[p.outputs[o]], {count}, at::kFloat) : Tensor{};
    }
  };

  // Copies `results` into the op's output buffers in order (each cut or fitted to
  // its buffer): what the kernel leaves for its consumers.
  static void store(const std::vector<Tensor>& outs, const std::vector<Tensor>& results) {
    for (size_t i = 0; i < outs.size() && i < results.size(); ++i) {
      if (!outs[i].defined() || !results[i].defined()) continue;
      const std::int64_t n = std::min(outs[i].numel(), results[i].numel());
      if (n > 0) outs[i].narrow(0, 0, n).copy_(results[i].reshape({-1}).narrow(0, 0, n));
    }
  }

  std::vector<Tensor> outputs(Builder& b) {
    std::vector<Tensor> outs;
    for (size_t o = 0; o < b.p.outputs.size(); ++o) outs.push_back(b.out(o));
    return outs;
  }

  // Builds the op's kernel; false when it has none (synthetic work then).
  bool build(Builder& b) {
    const Op& op = b.op;
    const std::string& t = op.type;
    std::vector<Tensor> outs = outputs(b);
    auto& k = kernels_[b.p.op];
    const double lr = 1e-6;

    if (is_any(t, {"VariableV2", "Placeholder", "Const", "NoOp"})) return false;  // no work: counted as real

    // GEMMs: MatMul and its gradients, batched or not.
    if (is_any(t, {"MatMul", "MatMulGradInput", "MatMulGradWeight", "MatMulGradA", "MatMulGradB", "BatchMatMul",
                   "BatchMatMulGradA", "BatchMatMulGradB"})) {
      const std::int64_t m = whole(shape_of(op, {"M", "m"})), n = whole(shape_of(op, {"N", "n"})),
                         kk = whole(shape_of(op, {"K", "k"}));
      const std::int64_t batch = std::max<std::int64_t>(1, whole(shape_of(op, {"batch"}, 1)));
      if (m <= 0 || n <= 0 || kk <= 0) return false;
      const bool grad_a = is_any(t, {"MatMulGradInput", "MatMulGradA", "BatchMatMulGradA"});
      const bool grad_b = is_any(t, {"MatMulGradWeight", "MatMulGradB", "BatchMatMulGradB"});
      const bool batched = t.rfind("BatchMatMul", 0) == 0;
      // C[M,N] = A[M,K] B[K,N]; dA = dC B^T; dB = A^T dC (a batch folds into M for MatMul).
      const std::int64_t rows = batched ? m : m * batch;
      const std::int64_t b0 = batched ? batch : 1;
      Tensor x, y;
      std::vector<std::int64_t> result_sizes;
      if (grad_a) {
        x = b.in({b0, rows, n});
        y = b.in({b0, kk, n});
        y = y.transpose(1, 2);
      } else if (grad_b) {
        x = b.in({b0, rows, kk});
        y = b.in({b0, rows, n});
        x = x.transpose(1, 2);
      } else {
        x = b.in({b0, rows, kk});
        y = b.in({b0, kk, n});
      }
      const std::int64_t r = x.size(1), c = y.size(2);
      Tensor dst = outs.empty() || !outs[0].defined() || outs[0].numel() < b0 * r * c
                       ? b.own({b0, r, c})
                       : outs[0].narrow(0, 0, b0 * r * c).view({b0, r, c});
      if (b0 == 1) {
        Tensor x2 = x.select(0, 0), y2 = y.select(0, 0), d2 = dst.select(0, 0);
        k = [x2, y2, d2]() mutable { at::mm_out(d2, x2, y2); };
      } else {
        k = [x, y, dst]() mutable { at::bmm_out(dst, x, y); };
      }
      return true;
    }

    // Convolutions (groups = channels for the depthwise ones) and their gradients.
    if (is_any(t, {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
                   "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"})) {
      const Window w = window_of(op);
      if (!w.ok() || w.f <= 0) return false;
      const bool depthwise = t.rfind("Depthwise", 0) == 0;
      const std::int64_t imported_groups = std::max<std::int64_t>(1, whole(shape_of(op, {"group"}, 1)));
      const std::int64_t groups = depthwise ? w.c : imported_groups;
      if (w.c % groups != 0 || w.f % groups != 0) return false;
      const std::int64_t f = depthwise ? std::max(w.f, w.c) / w.c * w.c : w.f;
      const std::vector<std::int64_t> xs = {w.n, w.c, w.h, w.w}, ws = {f, w.c / groups, w.kh, w.kw},
                                      ys = {w.n, f, w.oh, w.ow};
      const std::vector<std::int64_t> stride = {w.s, w.s}, pad = {w.ph, w.pw}, dil = {1, 1};
      if (t == "Conv2D" || t == "DepthwiseConv2dNative") {
        Tensor x = b.in(xs), wt = b.in(ws);
        k = [x, wt, stride, pad, dil, groups, outs]() {
          store(outs, {at::convolution(x, wt, {}, stride, pad, dil, false, {0, 0}, groups)});
        };
      } else {
        const bool input_grad = t.find("BackpropInput") != std::string::npos;
        Tensor dy = b.in(ys), x = b.in(xs), wt = b.in(ws);
        const std::array<bool, 3> mask = {input_grad, !input_grad, false};
        k = [dy, x, wt, stride, pad, dil, groups, mask, input_grad, outs]() {
          auto grads = at::convolution_backward(dy, x, wt, c10::nullopt, stride, pad, dil, false, {0, 0}, groups, mask);
          store(outs, {input_grad ? std::get<0>(grads) : std::get<1>(grads)});
        };
      }
      return true;
    }

    // LSTM cells: the four gates' GEMM over [input, hidden] and their nonlinearities.
    if (is_any(t, {"LSTMBlockCell", "LSTMBlockCellGrad", "LSTMBlockCellGradWeight"})) {
      const std::int64_t batch = whole(shape_of(op, {"batch"})), in = whole(shape_of(op, {"input"})),
                         hidden = whole(shape_of(op, {"hidden"}));
      if (batch <= 0 || in <= 0 || hidden <= 0) return false;
      if (t == "LSTMBlockCell") {
        // One kernel of (input + hidden) x 4 hidden, as TensorFlow's LSTMBlockCell
        // holds it: the input's and the hidden state's weights are its two parts.
        // Asked for first, so that the state (smaller) does not take its buffer.
        Tensor w = b.in({(in + hidden) * 4 * hidden});
        Tensor bias = b.in({4 * hidden});
        Tensor x = b.in({batch, in}), h = b.in({batch, hidden}), c = b.in({batch, hidden});
        Tensor w_ih = w.narrow(0, 0, 4 * hidden * in).view({4 * hidden, in});
        Tensor w_hh = w.narrow(0, 4 * hidden * in, 4 * hidden * hidden).view({4 * hidden, hidden});
        k = [x, h, c, w_ih, w_hh, bias, outs]() {
          auto hc = at::lstm_cell(x, {h, c}, w_ih, w_hh, bias, {});
          store(outs, {std::get<0>(hc), std::get<1>(hc)});
        };
      } else if (t == "LSTMBlockCellGrad") {
        // d gates from the saved gates and the incoming gradient (elementwise),
        // then d [x, h] = d gates · W^T.
        Tensor gates = b.in({batch, 4 * hidden}), dh = b.in({batch, hidden}), w = b.in({in + hidden, 4 * hidden});
        k = [gates, dh, w, outs]() {
          Tensor s = at::sigmoid(gates);
          Tensor dgates = s * (1 - s) * dh.repeat({1, 4});
          store(outs, {at::mm(dgates, w.t())});
        };
      } else {
        Tensor xh = b.in({batch, in + hidden}), dgates = b.in({batch, 4 * hidden});
        k = [xh, dgates, outs]() { store(outs, {at::mm(xh.t(), dgates)}); };
      }
      return true;
    }

    // Normalisation.
    if (is_any(t, {"FusedBatchNorm", "FusedBatchNormGrad"})) {
      const std::int64_t n = whole(shape_of(op, {"batch"})), c = whole(shape_of(op, {"channels"})),
                         elements = whole(shape_of(op, {"elements"}));
      if (n <= 0 || c <= 0 || elements < n * c) return false;
      const std::vector<std::int64_t> xs = {n, c, elements / (n * c)};
      Tensor gamma = b.own({c}), beta = b.own({c});
      if (t == "FusedBatchNorm") {
        Tensor x = b.in(xs);
        k = [x, gamma, beta, outs]() {
          auto r = at::native_batch_norm(x, gamma, beta, {}, {}, true, 0.1, 1e-3);
          store(outs, {std::get<0>(r), std::get<1>(r), std::get<2>(r)});
        };
      } else {
        Tensor dy = b.in(xs), x = b.in(xs);
        Tensor mean = b.own({c}), invstd = b.own({c}, 1.0).add_(1.0);
        k = [dy, x, gamma, mean, invstd, outs]() {
          auto r = at::native_batch_norm_backward(dy, x, gamma, {}, {}, mean, invstd, true, 1e-3, {true, true, true});
          store(outs, {std::get<0>(r), std::get<1>(r), std::get<2>(r)});
        };
      }
      return true;
    }
    if (is_any(t, {"LayerNorm", "LayerNormGrad", "LayerNormalization", "LayerNormalizationGrad"})) {
      const std::int64_t rows = whole(shape_of(op, {"rows"})), cols = whole(shape_of(op, {"cols"}));
      if (rows <= 0 || cols <= 0) return false;
      Tensor gamma = b.own({cols}), beta = b.own({cols});
      if (t == "LayerNorm" || t == "LayerNormalization") {
        Tensor x = b.in({rows, cols});
        k = [x, gamma, beta, cols, outs]() { store(outs, {std::get<0>(at::native_layer_norm(x, {cols}, gamma, beta, 1e-5))}); };
      } else {
        Tensor dy = b.in({rows, cols}), x = b.in({rows, cols});
        Tensor mean = b.own({rows, 1}), rstd = b.own({rows, 1}, 1.0).add_(1.0);
        k = [dy, x, mean, rstd, gamma, beta, cols, outs]() {
          auto r = at::native_layer_norm_backward(dy, x, {cols}, mean, rstd, gamma, beta, {true, true, true});
          store(outs, {std::get<0>(r), std::get<1>(r), std::get<2>(r)});
        };
      }
      return true;
    }

    // Pooling and its gradients.
    if (is_any(t, {"AvgPool", "AvgPoolGrad", "MaxPool", "MaxPoolGrad"})) {
      const Window w = window_of(op);
      if (!w.ok()) return false;
      const std::vector<std::int64_t> xs = {w.n, w.c, w.h, w.w}, ys = {w.n, w.c, w.oh, w.ow};
      const std::vector<std::int64_t> kernel = {w.kh, w.kw}, stride = {w.s, w.s}, pad = {w.ph, w.pw};
      if (t == "AvgPool") {
        Tensor x = b.in(xs);
        k = [x, kernel, stride, pad, outs]() { store(outs, {at::avg_pool2d(x, kernel, stride, pad)}); };
      } else if (t == "AvgPoolGrad") {
        Tensor dy = b.in(ys), x = b.in(xs);
        k = [dy, x, kernel, stride, pad, outs]() {
          store(outs, {at::avg_pool2d_backward(dy, x, kernel, stride, pad, false, true, c10::nullopt)});
        };
      } else if (t == "MaxPool") {
        Tensor x = b.in(xs);
        k = [x, kernel, stride, pad, outs]() { store(outs, {at::max_pool2d(x, kernel, stride, pad)}); };
      } else {
        Tensor dy = b.in(ys), x = b.in(xs);
        Tensor indices = std::get<1>(at::max_pool2d_with_indices(b.own(xs), kernel, stride, pad));
        private_.push_back(indices);
        held_[b.p.device] += 8.0 * static_cast<double>(indices.numel());
        k = [dy, x, indices, kernel, stride, pad, outs]() {
          store(outs, {at::max_pool2d_with_indices_backward(dy, x, kernel, stride, pad, {1, 1}, false, indices)});
        };
      }
      return true;
    }

    // Softmax and the loss.
    if (is_any(t, {"Softmax", "SoftmaxGrad", "SparseSoftmaxCrossEntropyWithLogits", "SoftmaxCrossEntropyGrad"})) {
      const std::int64_t rows = whole(shape_of(op, {"rows"})), cols = whole(shape_of(op, {"cols", "classes"}));
      if (rows <= 0 || cols <= 0) return false;
      Tensor x = b.in({rows, cols});
      if (t == "Softmax") {
        k = [x, outs]() { store(outs, {at::_softmax(x, 1, false)}); };
      } else if (t == "SoftmaxGrad") {
        Tensor y = b.in({rows, cols});
        k = [x, y, outs]() { store(outs, {at::_softmax_backward_data(x, y, 1, at::kFloat)}); };
      } else {
        Tensor labels = at::randint(cols, {rows}, at::kLong);
        private_.push_back(labels);
        held_[b.p.device] += 8.0 * static_cast<double>(rows);
        if (t == "SparseSoftmaxCrossEntropyWithLogits") {
          k = [x, labels, outs]() {
            Tensor logp = at::log_softmax(x, 1);
            store(outs, {at::nll_loss(logp, labels), logp});
          };
        } else {
          k = [x, labels, outs]() {
            Tensor p = at::softmax(x, 1);
            p.scatter_add_(1, labels.unsqueeze(1), at::full({labels.size(0), 1}, -1.0f));
            store(outs, {p});
          };
        }
      }
      return true;
    }

    // Embedding lookups and their gradient.
    if (is_any(t, {"ResourceGather", "GatherV2", "Gather", "UnsortedSegmentSum"})) {
      const std::int64_t rows = whole(shape_of(op, {"rows"})), vocab = whole(shape_of(op, {"vocab"})),
                         width = whole(shape_of(op, {"width"}));
      if (rows <= 0 || vocab <= 0 || width <= 0) return false;
      Tensor ids = at::randint(vocab, {rows}, at::kLong);
      private_.push_back(ids);
      held_[b.p.device] += 8.0 * static_cast<double>(rows);
      if (t == "UnsortedSegmentSum") {
        // The graph's embedding gradient is compact (its output is rows x width), as
        // TensorFlow's gather gradient is: the rows' gradients summed per distinct id.
        // Not PyTorch's dense [vocab, width] table (embedding_dense_backward), which
        // zeroes and writes the whole vocabulary: 18 ms for a 37,000-word table at any
        // batch, work the graph does not describe and no fit can price.
        Tensor grad = b.in({rows, width});
        k = [grad, ids, width, outs]() {
          const auto distinct = at::_unique(ids, /*sorted=*/false, /*return_inverse=*/true);
          const Tensor& inverse = std::get<1>(distinct);
          store(outs, {at::zeros({std::get<0>(distinct).size(0), width}, grad.options()).index_add_(0, inverse, grad)});
        };
      } else {
        Tensor table = b.in({vocab, width});
        k = [table, ids, outs]() { store(outs, {at::embedding(table, ids)}); };
      }
      return true;
    }

    // Optimizer updates on a real parameter tensor of the op's size.
    if (is_any(t, {"ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyRMSProp"})) {
      const std::int64_t params = whole(shape_of(op, {"params"}));
      if (params <= 0) return false;
      Tensor w = b.in({params}), g = b.in({params});
      if (t == "ApplyGradientDescent") {
        k = [w, g, lr]() mutable { w.sub_(g, lr); };
      } else if (t == "ApplyMomentum") {
        Tensor m = b.own({params}, 0);
        k = [w, g, m, lr]() mutable {
          m.mul_(0.9).add_(g);
          w.sub_(m, lr);
        };
      } else if (t == "ApplyRMSProp") {
        Tensor v = b.own({params}, 0);
        k = [w, g, v, lr]() mutable {
          v.mul_(0.9).addcmul_(g, g, 0.1);
          w.addcdiv_(g, v.sqrt().add_(1e-7), -lr);
        };
      } else {
        Tensor m = b.own({params}, 0), v = b.own({params}, 0);
        k = [w, g, m, v, lr]() mutable {
          m.mul_(0.9).add_(g, 0.1);
          v.mul_(0.999).addcmul_(g, g, 0.001);
          w.addcdiv_(m, v.sqrt().add_(1e-8), -lr);
        };
      }
      return true;
    }

    // Elementwise ops over their output's elements.
    const std::int64_t n = op.output_bytes.empty() ? 0 : static_cast<std::int64_t>(op.output_bytes[0] / 4);
    if (is_any(t, {"Relu", "Tanh", "Sigmoid", "Identity", "Dropout"}) && n > 0) {
      Tensor x = b.in({n});
      Tensor dst = outs.empty() || !outs[0].defined() ? b.own({n}) : outs[0].narrow(0, 0, std::min(n, outs[0].numel()));
      Tensor src = x.narrow(0, 0, dst.numel());
      if (t == "Relu") k = [dst, src]() mutable { at::clamp_min_out(dst, src, 0); };
      else if (t == "Tanh") k = [dst, src]() mutable { at::tanh_out(dst, src); };
      else if (t == "Sigmoid") k = [dst, src]() mutable { at::sigmoid_out(dst, src); };
      else k = [dst, src]() mutable { dst.copy_(src); };
      return true;
    }
    if (is_any(t, {"ReluGrad", "TanhGrad", "SigmoidGrad"}) && n > 0) {
      Tensor dy = b.in({n}), y = b.in({n});
      Tensor dst = outs.empty() || !outs[0].defined() ? b.own({n}) : outs[0].narrow(0, 0, std::min(n, outs[0].numel()));
      Tensor g = dy.narrow(0, 0, dst.numel()), v = y.narrow(0, 0, dst.numel());
      if (t == "ReluGrad") k = [dst, g, v]() mutable { at::threshold_backward_out(dst, g, v, 0); };
      else if (t == "TanhGrad") k = [dst, g, v]() mutable { at::tanh_backward_out(dst, g, v); };
      else k = [dst, g, v]() mutable { at::sigmoid_backward_out(dst, g, v); };
      return true;
    }
    if (is_any(t, {"BiasAdd", "BiasAddGrad"})) {
      const std::int64_t elements = whole(shape_of(op, {"elements"})), channels = whole(shape_of(op, {"channels"}));
      if (elements <= 0 || channels <= 0 || elements % channels != 0) return false;
      Tensor x = b.in({elements / channels, channels});
      if (t == "BiasAdd") {
        Tensor bias = b.in({channels});
        k = [x, bias, outs]() { store(outs, {at::add(x, bias)}); };
      } else {
        k = [x, outs]() { store(outs, {at::sum(x, {0})}); };
      }
      return true;
    }
    // Sums of their inputs (gradient accumulation), of the output's size.
    if (is_any(t, {"AddN", "Add", "AccumulateGrad", "Mul"}) && n > 0) {
      const size_t count = std::max<size_t>(2, b.p.inputs.size());
      std::vector<Tensor> xs;
      for (size_t i = 0; i < count; ++i) xs.push_back(b.in({n}));
      Tensor dst = outs.empty() || !outs[0].defined() ? b.own({n}) : outs[0].narrow(0, 0, std::min(n, outs[0].numel()));
      for (Tensor& x : xs) x = x.narrow(0, 0, dst.numel());
      const bool mul = t == "Mul";
      k = [dst, xs, mul]() mutable {
        if (mul) at::mul_out(dst, xs[0], xs[1]);
        else at::add_out(dst, xs[0], xs[1]);
        for (size_t i = 2; i < xs.size(); ++i) dst.add_(xs[i]);
      };
      return true;
    }
    if (is_any(t, {"Mean", "MeanGrad", "Fill"})) {
      const std::int64_t elements = std::max<std::int64_t>(1, whole(shape_of(op, {"elements"}, 1)));
      if (t == "Mean") {
        Tensor x = b.in({elements});
        k = [x, outs]() { store(outs, {at::mean(x)}); };
      } else {
        k = [outs]() mutable {
          for (Tensor o : outs)
            if (o.defined()) o.fill_(1.0f);
        };
      }
      return true;
    }
    // Data movement: concatenation, splitting, packing: the inputs' bytes, in
    // order, into the outputs.
    if (is_any(t, {"ConcatV2", "ConcatGrad", "Pack", "Unpack", "Split", "SplitV", "Concat", "Reshape", "Transpose"})) {
      std::vector<Tensor> xs;
      for (int buffer : b.p.inputs) {
        if (buffer < 0 || b.buffers[buffer] == nullptr) continue;
        const auto count = static_cast<std::int64_t>(b.plan.buffers[buffer].bytes / 4);
        if (count <= 0) continue;
        xs.push_back(at::from_blob(b.buffers[buffer], {count}, at::kFloat));
        coverage_.input_bytes += 4.0 * static_cast<double>(count);
        coverage_.input_bytes_from_edges += 4.0 * static_cast<double>(count);
      }
      if (xs.empty()) return false;
      k = [xs, outs]() {
        Tensor all = xs.size() == 1 ? xs[0] : at::cat(xs);
        std::int64_t at_ = 0;
        for (Tensor o : outs) {
          if (!o.defined() || at_ >= all.numel()) continue;
          const std::int64_t m = std::min(o.numel(), all.numel() - at_);
          o.narrow(0, 0, m).copy_(all.narrow(0, at_, m));
          at_ += m;
        }
      };
      return true;
    }
    return false;
  }

  std::vector<std::function<void()>> kernels_;
  std::vector<Tensor> private_;
  std::map<std::pair<int, std::int64_t>, Tensor> stand_ins_;  // (device, elements) -> an input no edge supplies
  std::vector<double> held_;
  KernelCoverage coverage_;
  int previous_threads_ = 1;
  bool threads_set_ = false;
};

}  // namespace

void register_aten_kernels() {
  set_cpu_kernels_factory([] { return std::make_unique<AtenKernels>(); });
}

}  // namespace aware
