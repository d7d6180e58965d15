#include "datasets/pytorch_eg.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/errors.h"
#include "core/formats.h"

namespace aware {

namespace {

using json = nlohmann::json;

constexpr const char* kThread = "[pytorch|profiler|execution_graph|thread]";
constexpr const char* kProcess = "[pytorch|profiler|execution_graph|process]";

struct TensorRef {
  long long storage = 0;
  long long tensor = 0;
  double elements = 0;
  double bytes = 0;
  long long key() const { return storage > 0 ? storage : -tensor; }  // storage when it has one
};

// A tensor value: [tensor id, storage id, offset, elements, element bytes(, device)].
bool as_tensor(const json& v, TensorRef* out) {
  if (!v.is_array() || (v.size() != 5 && v.size() != 6)) return false;
  for (int i = 0; i < 5; ++i)
    if (!v[i].is_number_integer()) return false;
  out->tensor = v[0].get<long long>();
  out->storage = v[1].get<long long>();
  out->elements = static_cast<double>(v[3].get<long long>());
  out->bytes = out->elements * static_cast<double>(v[4].get<long long>());
  return true;
}

// Every tensor in a value whose type names tensors ("Tensor(float)", "GenericList[Tensor(float),...]").
void tensors_of(const json& value, const json& type, std::vector<TensorRef>& out) {
  if (!type.is_string() || type.get<std::string>().find("Tensor") == std::string::npos) return;
  TensorRef t;
  if (as_tensor(value, &t)) {
    out.push_back(t);
  } else if (value.is_array()) {
    for (const json& item : value)
      if (as_tensor(item, &t)) out.push_back(t);
  }
}

std::vector<double> shape_of(const json& shapes, std::size_t i) {
  std::vector<double> out;
  if (!shapes.is_array() || i >= shapes.size() || !shapes[i].is_array()) return out;
  for (const json& d : shapes[i]) {
    if (!d.is_number()) return {};
    out.push_back(d.get<double>());
  }
  return out;
}

double product(const std::vector<double>& v, std::size_t from = 0, std::size_t to = std::string::npos) {
  double p = 1;
  for (std::size_t i = from; i < std::min(to, v.size()); ++i) p *= v[i];
  return p;
}

// FLOPs of matrix products and convolutions from their input shapes; 0 when unknown.
double shape_flops(const std::string& name, const json& shapes) {
  const auto a = shape_of(shapes, 0), b = shape_of(shapes, 1), c = shape_of(shapes, 2);
  if (name == "aten::mm" && a.size() == 2 && b.size() == 2) return 2 * a[0] * a[1] * b[1];
  if (name == "aten::addmm" && b.size() == 2 && c.size() == 2) return 2 * b[0] * b[1] * c[1];
  if (name == "aten::bmm" && a.size() == 3 && b.size() == 3) return 2 * a[0] * a[1] * a[2] * b[2];
  if (name == "aten::linear" && a.size() >= 1 && b.size() == 2) return 2 * product(a, 0, a.size() - 1) * b[0] * b[1];
  if ((name == "aten::convolution" || name == "aten::_convolution" || name == "aten::conv2d") && a.size() == 4 &&
      b.size() == 4) {
    // output elements x 2 x (input channels per group x kernel area); stride 1 and
    // 'same' size assumed for the output (the file gives no output shape here).
    return 2 * a[0] * b[0] * a[2] * a[3] * b[1] * b[2] * b[3];
  }
  return 0;
}

const json& field(const json& node, const char* key, const std::string& path) {
  auto it = node.find(key);
  if (it == node.end())
    throw ParseError(path + ": node " + (node.contains("id") ? node["id"].dump() : std::string("?")) + ": no \"" +
                     key + "\" field");
  return *it;
}

}  // namespace

bool is_pytorch_execution_graph(const json& doc) {
  return doc.is_object() && doc.contains("nodes") && doc["nodes"].is_array() && doc.contains("schema") &&
         doc["schema"].is_string();
}

ExecutionGraphImport read_pytorch_execution_graph(const std::string& path) {
  const json doc = read_json_file(path);
  if (!is_pytorch_execution_graph(doc))
    throw ParseError(path + ": not a PyTorch execution graph: it needs a \"schema\" string and a \"nodes\" array");
  ExecutionGraphImport out;
  out.schema = doc["schema"].get<std::string>();
  const json& nodes = doc["nodes"];
  out.nodes = static_cast<int>(nodes.size());
  // id -> node; children per parent, in id (call) order.
  std::map<long long, const json*> by_id;
  std::map<long long, std::vector<long long>> children;
  for (const json& n : nodes) {
    if (!n.is_object()) throw ParseError(path + ": a node is not an object");
    const json& id = field(n, "id", path);
    const json& parent = field(n, "parent", path);
    if (!id.is_number_integer() || !parent.is_number_integer())
      throw ParseError(path + ": node " + id.dump() + ": \"id\" and \"parent\" must be integers");
    if (!field(n, "name", path).is_string()) throw ParseError(path + ": node " + id.dump() + ": \"name\" must be a string");
    if (!by_id.emplace(id.get<long long>(), &n).second)
      throw ParseError(path + ": node " + id.dump() + ": a second node with this id");
    if (parent.get<long long>() != id.get<long long>()) children[parent.get<long long>()].push_back(id.get<long long>());
  }
  for (auto& [parent, list] : children) std::sort(list.begin(), list.end());

  // The ops: descend from each thread node through scopes without an operator schema.
  struct Pick {
    long long id;
    Phase phase;
  };
  std::vector<Pick> picks;
  std::function<void(long long, Phase)> descend = [&](long long id, Phase phase) {
    for (long long child : children[id]) {
      const json& n = *by_id.at(child);
      const std::string name = n["name"].get<std::string>();
      const bool schema = n.contains("op_schema") && n["op_schema"].is_string() && !n["op_schema"].get<std::string>().empty();
      if (!schema && !children[child].empty()) {
        ++out.wrappers;
        Phase inner = phase;
        if (name.find("autograd::engine") != std::string::npos || name.find("Backward") != std::string::npos)
          inner = Phase::kBackward;
        if (name.find("Optimizer") != std::string::npos || name.find("optimizer") != std::string::npos)
          inner = Phase::kUpdate;
        descend(child, inner);
      } else {
        picks.push_back({child, phase});
      }
    }
  };
  for (const auto& [id, n] : by_id)
    if ((*n)["name"] == kThread) descend(id, Phase::kForward);
  std::sort(picks.begin(), picks.end(), [](const Pick& a, const Pick& b) { return a.id < b.id; });
  if (picks.empty()) throw ParseError(path + ": no operator calls under a thread node (\"" + std::string(kThread) + "\")");

  out.graph = OpGraph(std::filesystem::path(path).stem().string());
  out.graph.set_source(path);
  std::map<long long, std::pair<int, int>> writer;  // storage key -> (op, output)
  for (const Pick& p : picks) {
    const json& n = *by_id.at(p.id);
    const std::string name = n["name"].get<std::string>();
    if (name == kProcess) continue;
    const json& inputs = field(n, "inputs", path);
    const json& input_types = field(n, "input_types", path);
    const json& outputs = field(n, "outputs", path);
    const json& output_types = field(n, "output_types", path);
    if (!inputs.is_array() || !input_types.is_array() || !outputs.is_array() || !output_types.is_array())
      throw ParseError(path + ": node " + std::to_string(p.id) + " (" + name + "): inputs, outputs and their types must be arrays");
    std::vector<TensorRef> ins, outs;
    for (std::size_t i = 0; i < inputs.size() && i < input_types.size(); ++i) tensors_of(inputs[i], input_types[i], ins);
    std::vector<std::vector<TensorRef>> per_output(outputs.size());
    for (std::size_t i = 0; i < outputs.size() && i < output_types.size(); ++i) tensors_of(outputs[i], output_types[i], per_output[i]);
    Op op;
    op.name = name + "#" + std::to_string(p.id);
    op.type = name.rfind("aten::", 0) == 0 ? name.substr(6) : name;
    op.phase = p.phase;
    double in_bytes = 0, out_bytes = 0, out_elements = 0;
    for (const TensorRef& t : ins) in_bytes += t.bytes;
    for (const auto& list : per_output) {
      double bytes = 0;
      for (const TensorRef& t : list) bytes += t.bytes;
      op.output_bytes.push_back(bytes);
      out_bytes += bytes;
    }
    if (op.output_bytes.empty()) op.output_bytes.push_back(0);
    for (const auto& list : per_output)
      for (const TensorRef& t : list) out_elements += t.elements;
    const double flops = shape_flops(name, n.contains("input_shapes") ? n["input_shapes"] : json());
    if (flops > 0) ++out.estimated;
    op.flops = flops > 0 ? flops : out_elements;
    op.bytes_accessed = in_bytes + out_bytes;
    const int id = out.graph.add_op(std::move(op));
    std::set<std::pair<int, int>> joined;
    for (const TensorRef& t : ins) {
      auto w = writer.find(t.key());
      if (w == writer.end() || w->second.first == id) continue;
      if (!joined.insert(w->second).second) continue;
      out.graph.add_edge(w->second.first, id, w->second.second, t.bytes);
    }
    for (std::size_t o = 0; o < per_output.size(); ++o)
      for (const TensorRef& t : per_output[o]) writer[t.key()] = {id, static_cast<int>(o)};
  }
  out.graph.validate();
  return out;
}

}  // namespace aware
