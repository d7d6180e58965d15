// ONNX models written through the ONNX protobuf API (no Python), for the
// importer's tests: a small writer, a tiny CNN and torchvision's ResNet-50
// structure. Include after tests/cli/cli_run.h (for tmp()).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace aware::test_models {

// A small ONNX model writer.
class Maker {
 public:
  explicit Maker(int opset = 13, std::string name = "tiny") {
    m_.set_ir_version(8);
    m_.set_producer_name("aware-test");
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_.mutable_graph()->set_name(std::move(name));
  }
  // A float graph input; a dimension < 0 is dynamic ("N").
  void input(const std::string& name, const std::vector<std::int64_t>& dims,
             int elem_type = onnx::TensorProto::FLOAT) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    for (auto d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
  }
  // A float graph output of `rank` dimensions, each left for shape inference
  // (as exporters write a dynamic batch).
  void output(const std::string& name, int rank) {
    auto* v = m_.mutable_graph()->add_output();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < rank; ++i) t->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
  }
  // A weight: stored (an initializer with zeros), or a shaped graph input
  // (torch.onnx.export with export_params=False).
  void weight(const std::string& name, const std::vector<std::int64_t>& dims, bool stored) {
    if (!stored) {
      input(name, dims);
      return;
    }
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.0f);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? out.front() : name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string write(const std::string& file) const {
    const std::string path = tmp(file);
    std::ofstream out(path, std::ios::binary);
    m_.SerializeToOstream(&out);
    return path;
  }

 private:
  onnx::ModelProto m_;
};

// x [N,3,8,8] -> Conv 4x3x3x3 (+bias, pad 1) -> Relu -> MaxPool 2 -> Flatten -> Gemm 10x64 (+bias).
inline std::string tiny_cnn(bool stored, const std::string& file) {
  Maker m;
  m.input("x", {-1, 3, 8, 8});
  m.weight("conv.weight", {4, 3, 3, 3}, stored);
  m.weight("conv.bias", {4}, stored);
  m.weight("fc.weight", {10, 64}, stored);
  m.weight("fc.bias", {10}, stored);
  auto* conv = m.node("Conv", {"x", "conv.weight", "conv.bias"}, {"c"}, "conv");
  Maker::ints(conv, "kernel_shape", {3, 3});
  Maker::ints(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  auto* pool = m.node("MaxPool", {"r"}, {"p"}, "pool");
  Maker::ints(pool, "kernel_shape", {2, 2});
  Maker::ints(pool, "strides", {2, 2});
  m.node("Flatten", {"p"}, {"f"}, "flatten");
  auto* fc = m.node("Gemm", {"f", "fc.weight", "fc.bias"}, {"y"}, "fc");
  Maker::integer(fc, "transB", 1);
  m.output("y", 2);
  return m.write(file);
}

// torchvision's ResNet-50 (v1.5: the stride in the 3x3 convolution), structure
// only, as torch.onnx.export(..., export_params=False) writes it.
// v1_5 = false puts the stride in the first 1x1 instead, as the paper (and zoo:resnet50) do.
inline std::string resnet50(const std::string& file, bool v1_5 = true) {
  Maker m(13, "resnet50");
  m.input("input", {-1, 3, 224, 224});
  int id = 0;
  const auto conv = [&](const std::string& x, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride) {
    const std::string n = "conv" + std::to_string(id++);
    m.weight(n + ".weight", {out, in, k, k}, false);
    auto* c = m.node("Conv", {x, n + ".weight"}, {n}, n);
    Maker::ints(c, "kernel_shape", {k, k});
    Maker::ints(c, "strides", {stride, stride});
    Maker::ints(c, "pads", {k / 2, k / 2, k / 2, k / 2});
    const std::string b = n + ".bn";
    for (const char* p : {".weight", ".bias", ".running_mean", ".running_var"}) m.weight(b + p, {out}, false);
    m.node("BatchNormalization", {n, b + ".weight", b + ".bias", b + ".running_mean", b + ".running_var"}, {b}, b);
    return b;
  };
  const auto relu = [&](const std::string& x) {
    m.node("Relu", {x}, {x + ".relu"});
    return x + ".relu";
  };
  std::string x = relu(conv("input", 3, 64, 7, 2));
  auto* pool = m.node("MaxPool", {x}, {"pool"}, "maxpool");
  Maker::ints(pool, "kernel_shape", {3, 3});
  Maker::ints(pool, "strides", {2, 2});
  Maker::ints(pool, "pads", {1, 1, 1, 1});
  x = "pool";
  std::int64_t in = 64;
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = 64 << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      const std::string a = relu(conv(x, in, planes, 1, v1_5 ? 1 : stride));
      const std::string b = relu(conv(a, planes, planes, 3, v1_5 ? stride : 1));
      const std::string c = conv(b, planes, planes * 4, 1, 1);
      const std::string shortcut = i == 0 ? conv(x, in, planes * 4, 1, stride) : x;
      const std::string sum = "add" + std::to_string(id++);
      m.node("Add", {c, shortcut}, {sum});
      x = relu(sum);
      in = planes * 4;
    }
  }
  m.node("GlobalAveragePool", {x}, {"gap"});
  auto* flat = m.node("Flatten", {"gap"}, {"flat"});
  Maker::integer(flat, "axis", 1);
  m.weight("fc.weight", {1000, 2048}, false);
  m.weight("fc.bias", {1000}, false);
  auto* fc = m.node("Gemm", {"flat", "fc.weight", "fc.bias"}, {"logits"}, "fc");
  Maker::integer(fc, "transB", 1);
  m.output("logits", 2);
  return m.write(file);
}

}  // namespace aware::test_models
