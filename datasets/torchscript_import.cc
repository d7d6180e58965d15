#include "datasets/torchscript_import.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/archive_check.h"
#include "core/errors.h"
#include "datasets/aten_rules.h"
#include "datasets/import_rules.h"
#include "datasets/layers.h"

namespace aware {
namespace {

using datasets_detail::GraphBuilder;
using datasets_detail::ImportedNode;
using datasets_detail::Tensor;
using Rule = datasets_detail::AtenRule;
using torch::jit::Node;
using torch::jit::Value;

double product(const std::vector<double>& dims) {
  double p = 1;
  for (double d : dims) p *= d;
  return p;
}

bool is_tensor(const Value* v) { return v->type()->kind() == c10::TypeKind::TensorType; }
bool is_tensor_list(const Value* v) {
  const auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

// What one shape run records through aware_import::note (below): the sizes of
// every tensor it notes, by index, and the last node that finished, so that a
// run that fails names its node.
struct ShapeRun {
  std::vector<std::optional<std::vector<std::int64_t>>> sizes;
  std::int64_t finished = -1;  // index of the last node noted as done
};
thread_local ShapeRun* current_shape_run = nullptr;

// Makes `run` the current shape run of this thread for its lifetime.
class ShapeRunScope {
 public:
  explicit ShapeRunScope(ShapeRun& run) { current_shape_run = &run; }
  ~ShapeRunScope() { current_shape_run = nullptr; }
  ShapeRunScope(const ShapeRunScope&) = delete;
  ShapeRunScope& operator=(const ShapeRunScope&) = delete;
};

// aware_import::note(node, value, index): node `node` of a shape run finished;
// its output `value`, when a tensor, is tensor `index`. Inserted after every
// node of the run's copy of forward(); outside a shape run it does nothing.
const torch::jit::RegisterOperators kNoteOperator({torch::jit::Operator(
    "aware_import::note(int node, Tensor? value, int index) -> ()",
    [](torch::jit::Stack& stack) {
      const std::int64_t node = torch::jit::peek(stack, 0, 3).toInt();
      const c10::IValue value = torch::jit::peek(stack, 1, 3);
      const std::int64_t index = torch::jit::peek(stack, 2, 3).toInt();
      torch::jit::drop(stack, 3);
      ShapeRun* run = current_shape_run;
      if (run == nullptr) return;
      run->finished = node;
      if (index >= 0 && static_cast<size_t>(index) < run->sizes.size() && value.isTensor())
        run->sizes[static_cast<size_t>(index)] = value.toTensor().sizes().vec();
    },
    c10::AliasAnalysisKind::CONSERVATIVE)});

// The one line worth keeping from a LibTorch exception: a c10::Error without its
// C++ backtrace; from the TorchScript interpreter, which wraps the failing op's
// message in a traceback of the model's code, the "SomethingError: ..." line
// that ends it.
std::string libtorch_message(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return first_line(c10_error->what_without_backtrace());
  const std::string text = e.what();
  if (text.rfind("The following operation failed in the TorchScript interpreter", 0) == 0) {
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find('\n', start), text.size());
      const std::string line = text.substr(start, end - start);
      const size_t colon = line.find("Error: ");
      const bool named =
          colon != std::string::npos && colon > 0 &&
          std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
          });
      if (named) return line.substr(colon + 7);
      start = end + 1;
    }
  }
  return first_line(text);
}

// "aten::relu_" -> "relu": in-place variants cost what their functional twins do.
std::string aten_name(const Node* n) {
  std::string name = n->kind().toUnqualString();
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') name.pop_back();
  return name;
}

class Importer : public datasets_detail::ImporterBase {
 public:
  using ImporterBase::ImporterBase;

  OpGraph run() {
    const datasets_detail::Optimizer optimizer = datasets_detail::optimizer_named(options_.optimizer);
    // Every LibTorch call below may throw c10::Error (or a JIT error) with a
    // multi-line message and a C++ backtrace: one line naming the file instead.
    try {
      load();
      prepare_graph();
      set_inputs();
      record_shapes();
      GraphBuilder b(module_name_, optimizer);
      return build(b);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      fail("LibTorch refuses the module: " + libtorch_message(e));
    }
  }

 private:
  [[noreturn]] void fail_node(const Node* n, const std::string& what) const {
    const std::string out = n->outputs().empty() ? "" : "'" + n->output(0)->debugName() + "' ";
    fail("node " + out + "(" + n->kind().toQualString() + "): " + what);
  }

  void load() {
    // The zip structure and every stored entry's CRC first: LibTorch reads a
    // damaged archive without a word (core/archive_check.h).
    check_torch_archive(path_, "TorchScript module");
    torch::jit::Module module;
    try {
      module = torch::jit::load(path_);
    } catch (const std::exception& e) {
      fail("not a TorchScript module (torch::jit::load: " + first_line(e.what()) + ")");
    }
    if (!module.find_method("forward")) fail("the TorchScript module has no forward() method");
    for (const auto& p : module.named_parameters(/*recurse=*/true)) {
      std::vector<double> dims;
      for (auto d : p.value.sizes()) dims.push_back(static_cast<double>(d));
      parameters_[p.name] = dims;
    }
    module_name_ = std::filesystem::path(path_).stem().string();
    try {
      module.eval();
      module_ = torch::jit::freeze_module(module, {}, /*freezeInterfaces=*/true, /*preserveParameters=*/true);
    } catch (const std::exception& e) {
      fail("cannot freeze the module for import: " + first_line(e.what()));
    }
  }

  void prepare_graph() {
    torch::jit::Method forward = module_.get_method("forward");
    schema_args_.clear();
    for (const auto& a : forward.function().getSchema().arguments()) schema_args_.push_back(a.name());
    graph_ = forward.graph()->copy();
    torch::jit::Inline(*graph_);
    // Freezing inlines the submodules' methods and then deletes them, but the
    // inlined nodes keep call stacks that point at those deleted functions; the
    // interpreter reads them to format the traceback of an op that fails, so a
    // forward() that fails on the given shapes crashed there. Point every call
    // stack at the frozen module's forward(), which lives as long as module_.
    repoint_call_stacks(graph_->block(), &forward.function());
    torch::jit::ConstantPropagation(graph_);
    torch::jit::EliminateDeadCode(graph_);
    for (Node* n : graph_->nodes())
      if (!n->blocks().empty()) {
        bool tensor_work = false;
        for (torch::jit::Block* block : n->blocks())
          for (Node* inner : block->nodes())
            for (const Value* o : inner->outputs()) tensor_work = tensor_work || is_tensor(o);
        if (tensor_work)
          fail_node(n, "control flow with tensor work that freezing cannot fold; export with torch.jit.trace instead");
      }
  }

  static void repoint_call_stacks(torch::jit::Block* block, torch::jit::Function* live) {
    for (Node* n : block->nodes()) {
      if (n->callstack())
        n->setCallStack(c10::make_intrusive<torch::jit::InlinedCallStack>(live, n->sourceRange()));
      for (torch::jit::Block* inner : n->blocks()) repoint_call_stacks(inner, live);
    }
  }

  // The data inputs: forward()'s arguments after self, each shaped by --input-shape.
  void set_inputs() {
    const auto inputs = graph_->inputs();
    std::vector<std::string> names;
    for (size_t i = 1; i < inputs.size(); ++i) {
      const std::string name = i < schema_args_.size() ? schema_args_[i] : inputs[i]->debugName();
      names.push_back(name);
    }
    for (const auto& [name, dims] : options_.input_shapes)
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("--input-shape " + name + ": " + path_ + " has no forward() argument of that name (its arguments: " +
                          known + ")");
      }
    datasets_detail::check_batch_agrees_with_shapes(path_, options_);
    if (names.empty()) fail("forward() takes no data input");
    for (size_t i = 1; i < inputs.size(); ++i) {
      const std::string& name = names[i - 1];
      if (!is_tensor(inputs[i]))
        fail("forward() argument '" + name + "' is a " + inputs[i]->type()->str() + ", not a tensor (only tensor arguments are imported)");
      const auto it = options_.input_shapes.find(name);
      if (it == options_.input_shapes.end())
        throw ConfigError(path_ + ": forward() argument '" + name + "' has no shape in a TorchScript file: give --input-shape " +
                          name + "=AxBx...");
      // --batch and this shape agree (check_batch_agrees_with_shapes), so the shape is final.
      const std::vector<std::int64_t>& dims = it->second;
      datasets_detail::check_input_size(path_, name, dims);
      bool ids = false;  // token ids feed an embedding: integers, not floats
      for (const auto& use : inputs[i]->uses()) ids = ids || (aten_name(use.user) == "embedding" && use.offset == 1);
      input_values_.push_back(torch::zeros(dims, ids ? torch::kLong : torch::kFloat));
      std::vector<double> shape(dims.begin(), dims.end());
      shapes_[inputs[i]] = shape;
      report_.data_inputs.push_back(name + datasets_detail::dims_text(shape));
    }
  }

  // One run on zeros that records the sizes of every tensor: an
  // aware_import::note after each node, removed again after the run. When
  // forward() fails, the notes tell which node did.
  void record_shapes() {
    std::vector<Node*> order;  // the nodes in the order the run executes them
    for (Node* n : graph_->nodes()) order.push_back(n);
    std::vector<Value*> tensors;
    std::vector<Node*> added;
    const c10::Symbol note = c10::Symbol::fromQualString("aware_import::note");
    for (size_t k = 0; k < order.size(); ++k) {
      Node* n = order[k];
      if (n->kind() == c10::prim::Constant) continue;  // cannot fail, writes no tensor of the step
      torch::jit::WithInsertPoint guard(n->next());
      const auto constant = [&](const c10::IValue& v) {
        Value* c = graph_->insertConstant(v);
        added.push_back(c->node());
        return c;
      };
      const auto add_note = [&](Value* tensor, std::int64_t index) {
        Node* m =
            graph_->create(note,
                           {constant(static_cast<std::int64_t>(k)),
                            tensor != nullptr ? tensor : constant(c10::IValue()), constant(index)},
                           0);
        graph_->insertNode(m);
        added.push_back(m);
      };
      bool any = false;
      for (Value* o : n->outputs())
        if (is_tensor(o)) {
          add_note(o, static_cast<std::int64_t>(tensors.size()));
          tensors.push_back(o);
          any = true;
        }
      if (!any) add_note(nullptr, -1);
    }
    ShapeRun run;
    run.sizes.resize(tensors.size());
    torch::jit::Stack stack;
    stack.emplace_back(module_._ivalue());
    for (const auto& t : input_values_) stack.emplace_back(t);
    try {
      torch::NoGradGuard no_grad;
      const ShapeRunScope scope(run);
      torch::jit::Code code(graph_, "aware_import");
      torch::jit::InterpreterState state(code);
      state.run(stack);
    } catch (const std::exception& e) {
      shape_run_failed(order, tensors, run, libtorch_message(e));
    }
    // The notes were only for this run: the translation walks the graph without them.
    for (auto it = added.rbegin(); it != added.rend(); ++it) (*it)->destroy();
    for (size_t i = 0; i < tensors.size(); ++i) {
      AWARE_CHECK(run.sizes[i].has_value(), "the shape run recorded no size for a tensor");
      shapes_[tensors[i]] = std::vector<double>(run.sizes[i]->begin(), run.sizes[i]->end());
    }
  }

  // The node after the last one the run finished (constants cannot fail), with
  // the shapes of the tensors it read.
  [[noreturn]] void shape_run_failed(const std::vector<Node*>& order,
                                     const std::vector<Value*>& tensors, const ShapeRun& run,
                                     const std::string& message) const {
    const std::string what =
        "forward() fails on zero inputs of the given shapes (check --input-shape): " + message;
    const Node* failed = nullptr;
    for (size_t k = static_cast<size_t>(run.finished + 1); k < order.size() && failed == nullptr;
         ++k)
      if (order[k]->kind() != c10::prim::Constant) failed = order[k];
    if (failed == nullptr) fail(what);
    std::string read;
    for (const Value* in : failed->inputs()) {
      if (!is_tensor(in)) continue;
      std::optional<std::vector<double>> dims;
      if (const auto it = shapes_.find(in); it != shapes_.end()) dims = it->second;
      const auto t = std::find(tensors.begin(), tensors.end(), in);
      if (t != tensors.end()) {
        const auto& sizes = run.sizes[static_cast<size_t>(t - tensors.begin())];
        if (sizes) dims = std::vector<double>(sizes->begin(), sizes->end());
      }
      if (dims) read += (read.empty() ? "" : ", ") + datasets_detail::dims_text(*dims);
    }
    fail_node(failed, what + (read.empty() ? "" : " (its tensor inputs: " + read + ")"));
  }

  // `self.a.b.weight` for a prim::GetAttr chain from self; empty when it is not one.
  std::string attribute_path(const Value* v) const {
    const Node* n = v->node();
    if (n->kind() != c10::prim::GetAttr) return "";
    const Value* owner = n->input(0);
    const std::string name = n->s(c10::attr::name);
    if (owner == graph_->inputs()[0]) return name;
    const std::string prefix = attribute_path(owner);
    return prefix.empty() ? "" : prefix + "." + name;
  }

  // The tensor a node reads: an activation, a parameter (a variable made on first
  // use), or nothing (a constant, a buffer, a shape computation).
  std::optional<Tensor> tensor(GraphBuilder& b, const Value* v) {
    if (const auto it = tensors_.find(v); it != tensors_.end()) return it->second;
    const std::string path = attribute_path(v);
    if (const auto p = parameters_.find(path); !path.empty() && p != parameters_.end()) {
      const Tensor t = b.variable(path, p->second.empty() ? std::vector<double>{1} : p->second);
      report_.params += product(p->second);
      param_values_.insert(v);
      tensors_[v] = t;
      return t;
    }
    return std::nullopt;
  }

  std::vector<double> shape_of(const Node* n, const Value* v) const {
    const auto it = shapes_.find(v);
    if (it == shapes_.end()) fail_node(n, "output '" + v->debugName() + "' has no recorded shape");
    return it->second;
  }

  static std::optional<std::vector<std::int64_t>> ints(const Value* v) {
    const auto iv = torch::jit::toIValue(v);
    if (!iv) return std::nullopt;
    if (iv->isIntList()) return iv->toIntVector();
    if (iv->isInt()) return std::vector<std::int64_t>{iv->toInt()};
    return std::nullopt;
  }
  static std::optional<bool> flag(const Value* v) {
    const auto iv = torch::jit::toIValue(v);
    if (iv && iv->isBool()) return iv->toBool();
    return std::nullopt;
  }

  // The tensors a node writes: tensor outputs, and the elements of a tensor list
  // that a prim::ListUnpack takes apart (chunk, split).
  static std::vector<const Value*> written(const Node* n) {
    std::vector<const Value*> out;
    for (const Value* o : n->outputs()) {
      if (is_tensor(o)) out.push_back(o);
      else if (is_tensor_list(o))
        for (const auto& use : o->uses())
          if (use.user->kind() == c10::prim::ListUnpack)
            for (const Value* e : use.user->outputs()) out.push_back(e);
    }
    return out;
  }

  OpGraph build(GraphBuilder& b) {
    const auto inputs = graph_->inputs();
    for (size_t i = 1; i < inputs.size(); ++i) tensors_[inputs[i]] = b.input(schema_args_.size() > i ? schema_args_[i] : inputs[i]->debugName(), shapes_.at(inputs[i]));
    b.set_batch(shapes_.at(inputs[1]).empty() ? 1 : shapes_.at(inputs[1]).front());
    for (Node* n : graph_->nodes()) {
      ++report_.nodes;
      const std::vector<const Value*> outs = written(n);
      if (outs.empty() || !n->kind().is_aten()) {  // constants, attributes, lists, sizes
        ++report_.static_nodes;
        continue;
      }
      add_node(b, n, outs);
    }
    // The returned tensors, a tuple or list taken apart.
    std::vector<Tensor> results;
    std::vector<std::string> names;
    const auto take = [&](const Value* v) {
      if (const auto it = tensors_.find(v); it != tensors_.end() && !param_values_.count(v)) {
        results.push_back(it->second);
        names.push_back(v->debugName());
      }
    };
    for (const Value* o : graph_->outputs()) {
      const Node* p = o->node();
      if (p->kind() == c10::prim::TupleConstruct || p->kind() == c10::prim::ListConstruct)
        for (const Value* e : p->inputs()) take(e);
      else
        take(o);
    }
    return finish_model(b, results, names, "forward() returns no tensor computed from its inputs");
  }

  void add_node(GraphBuilder& b, const Node* n, const std::vector<const Value*>& outs) {
    const std::string aten = aten_name(n);
    // The node's inputs, a tensor list (cat, stack) taken apart in place.
    std::vector<const Value*> args;
    for (const Value* v : n->inputs()) {
      if (is_tensor_list(v) && v->node()->kind() == c10::prim::ListConstruct)
        for (const Value* e : v->node()->inputs()) args.push_back(e);
      else
        args.push_back(v);
    }
    std::vector<std::optional<Tensor>> ins;
    bool activation = false, any = false;
    for (const Value* v : args) {
      ins.push_back(tensor(b, v));
      any = any || ins.back().has_value();
      activation = activation || (ins.back() && !param_values_.count(v));
    }
    if (!any) {  // computed from constants alone: folded, outside the step
      ++report_.static_nodes;
      return;
    }
    ImportedNode node;
    node.name = aten + "/" + outs.front()->debugName();
    std::optional<Rule> rule = datasets_detail::aten_rule(aten);
    if (aten == "cat" || aten == "concat" || aten == "stack") {
      rule = Rule{"Concat", {}};
      for (size_t i = 0; i < args.size(); ++i) rule->slots.push_back(static_cast<int>(i));
    } else if (aten == "max" || aten == "min") {  // elementwise with two tensors, else a reduction
      const bool pair = args.size() > 1 && is_tensor(args[1]);
      rule = pair ? Rule{aten == "max" ? "Max" : "Min", {0, 1}} : Rule{aten == "max" ? "ReduceMax" : "ReduceMin", {0}};
    }
    if (aten == "lstm" || aten == "gru" || aten == "rnn_tanh" || aten == "rnn_relu") {
      recurrence(n, aten, args, ins, node);
    } else if (!rule) {
      node.op = std::string(n->kind().toQualString());  // no rule: the bytes it moves, listed
      for (const auto& t : ins) node.inputs.push_back(t);
    } else {
      node.op = rule->onnx;
      for (int slot : rule->slots)
        node.inputs.push_back(slot >= 0 && slot < static_cast<int>(ins.size()) ? ins[static_cast<size_t>(slot)] : std::nullopt);
    }
    const bool first_only = node.op == "MaxPool" || node.op == "BatchNormalization";
    for (const Value* o : outs) {
      node.outputs.push_back(shape_of(n, o));
      if (first_only) break;
    }
    // A parameter only reshaped or transposed (w.t() before a matmul) stays the parameter.
    if (!activation && (node.op == "Identity" || node.op == "Transpose")) {
      if (product(node.outputs[0]) == ins[0]->elements()) {
        tensors_[outs.front()] = datasets_detail::view(*ins[0], node.outputs[0]);
        param_values_.insert(outs.front());
        ++report_.static_nodes;
        return;
      }
    }
    set_attributes(n, aten, args, ins, node);
    std::vector<Tensor> results;
    try {
      results = datasets_detail::add_imported_node(b, node, report_.uncosted);
    } catch (const datasets_detail::ImportNodeError& e) {
      fail_node(n, e.what());
    }
    for (size_t k = 0; k < results.size() && k < outs.size(); ++k) tensors_[outs[k]] = results[k];
  }

  // aten::lstm / gru / rnn_*(input, hx, params, has_biases, num_layers, dropout,
  // train, bidirectional, batch_first), the lists taken apart: the input and the
  // parameters [w_ih, w_hh, (b_ih, b_hh)] per layer and direction, sizes as attributes.
  void recurrence(const Node* n, const std::string& aten, const std::vector<const Value*>& args,
                  const std::vector<std::optional<Tensor>>& ins, ImportedNode& node) const {
    node.op = aten == "lstm" ? "LSTM" : aten == "gru" ? "GRU" : "RNN";
    if (args.size() < 7 || !ins[0] || param_values_.count(args[0])) fail_node(n, "unexpected arguments for a recurrence");
    const size_t last = args.size();
    const auto layers = ints(args[last - 5]);
    const auto bidirectional = flag(args[last - 2]), batch_first = flag(args[last - 1]);
    if (!layers || !bidirectional || !batch_first) fail_node(n, "num_layers, bidirectional or batch_first is not a constant");
    node.inputs.push_back(ins[0]);
    for (size_t i = 1; i < last; ++i)
      if (ins[i] && param_values_.count(args[i])) node.inputs.push_back(ins[i]);
    if (node.inputs.size() < 3) fail_node(n, "the recurrence's weights are not parameters of the module");
    const Tensor& w_ih = *node.inputs[1];
    const Tensor& w_hh = *node.inputs[2];
    const std::vector<double>& x = ins[0]->dims;
    if (x.size() != 3 || w_ih.dims.size() != 2 || w_hh.dims.size() != 2) fail_node(n, "expects a 3-d input and 2-d weights");
    node.attrs["steps"] = *batch_first ? x[1] : x[0];
    node.attrs["batch"] = *batch_first ? x[0] : x[1];
    node.attrs["input_size"] = x[2];
    node.attrs["gates_hidden"] = w_ih.dim(0);
    node.attrs["hidden_size"] = w_hh.dim(1);
    node.attrs["directions"] = *bidirectional ? 2 : 1;
    node.attrs["layers"] = static_cast<double>(layers->front());
  }

  void set_attributes(const Node* n, const std::string& aten, const std::vector<const Value*>& args,
                      const std::vector<std::optional<Tensor>>& ins, ImportedNode& node) const {
    const auto arg = [&](size_t i) -> const Value* { return i < args.size() ? args[i] : nullptr; };
    if (node.op == "Conv") {
      const bool transposed = (aten == "_convolution" || aten == "convolution") && arg(6) && flag(arg(6)).value_or(false);
      if (transposed) {
        node.op = "ConvTranspose";
        const auto g = arg(8) ? ints(arg(8)) : std::nullopt;
        node.attrs["group"] = g && !g->empty() ? static_cast<double>(g->front()) : 1;
      } else if (ins.size() > 1 && ins[0] && ins[1] && ins[1]->dims.size() > 1 && ins[1]->dim(1) > 0) {
        node.attrs["group"] = ins[0]->dim(1) / ins[1]->dim(1);  // W is {out, in/group, k...}
      }
    } else if (node.op == "ConvTranspose") {
      const auto g = arg(6) ? ints(arg(6)) : std::nullopt;
      node.attrs["group"] = g && !g->empty() ? static_cast<double>(g->front()) : 1;
    } else if (node.op == "MaxPool" || node.op == "AveragePool") {
      const auto k = arg(1) ? ints(arg(1)) : std::nullopt;
      if (!k) fail_node(n, "kernel_size is not a constant");
      double window = 1;
      for (auto v : *k) window *= static_cast<double>(v);
      // A 1-element list stands for the same size on every spatial axis.
      const size_t spatial = node.outputs[0].size() > 2 ? node.outputs[0].size() - 2 : 1;
      if (k->size() == 1) window = std::pow(static_cast<double>(k->front()), static_cast<double>(spatial));
      node.attrs["window"] = window;
    } else if (node.op == "GlobalAveragePool" || node.op == "GlobalMaxPool") {
      const std::vector<double>& out = node.outputs[0];
      const bool global = std::all_of(out.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(out.size())),
                                      out.end(), [](double d) { return d == 1; });
      if (!global) {  // adaptive pooling to a grid: windows of input / output
        node.attrs["window"] = ins[0]->elements() / product(out);
        node.op = node.op == "GlobalAveragePool" ? "AveragePool" : "MaxPool";
      }
    } else if (node.op == "Gather") {
      if (!ins.empty() && ins[0] && param_values_.count(args[0])) node.attrs["embedding"] = 1;
    }
  }

  std::string module_name_;
  torch::jit::Module module_;
  std::shared_ptr<torch::jit::Graph> graph_;
  std::vector<std::string> schema_args_;
  std::map<std::string, std::vector<double>> parameters_;  // path -> dims
  std::vector<torch::Tensor> input_values_;
  std::unordered_map<const Value*, std::vector<double>> shapes_;
  std::unordered_map<const Value*, Tensor> tensors_;
  std::set<const Value*> param_values_;
};

}  // namespace

OpGraph import_torchscript(const std::string& path, const ModelImportOptions& options, ModelImportReport* report) {
  return datasets_detail::run_importer<Importer>(path, options, report);
}

}  // namespace aware
