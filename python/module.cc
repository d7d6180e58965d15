// The `aware` Python module's extension, `aware._aware`: errors, graphs,
// clusters and the catalogue here; simulation, batches, placers and strategies in
// module_run.cc; the placement MDP in module_env.cc. The package's Python files
// (python/aware/*.py) build the public API on it.
#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>
#include <pybind11/stl.h>

#include "agents/rl/mdp.h"
#include "agents/common/placer_common.h"
#include "builtins/builtins.h"
#include "builtins/catalogue.h"
#include "core/errors.h"
#include "core/formats.h"
#include "datasets/load.h"
#include "python/module.h"

namespace aware::python {

namespace {

PyObject* g_error = nullptr;
PyObject* g_config_error = nullptr;
PyObject* g_input_error = nullptr;
PyObject* g_parse_error = nullptr;
PyObject* g_graph_error = nullptr;
PyObject* g_device_error = nullptr;
PyObject* g_internal_error = nullptr;

// The InputError a helper raises for a bad array (caught by the translator).
class ArrayInputError : public Error {
 public:
  using Error::Error;
};

PyObject* new_exception(py::module_& m, const char* name, PyObject* base, PyObject* second_base, const char* doc) {
  const std::string qualified = std::string("aware.") + name;
  PyObject* bases = second_base != nullptr ? PyTuple_Pack(2, base, second_base) : PyTuple_Pack(1, base);
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // steals nothing: add_object increfs
  return type;
}

std::string json_text(const nlohmann::json& doc) { return doc.dump(); }

py::object json_to_python(const nlohmann::json& doc) {
  return py::module_::import("json").attr("loads")(json_text(doc));
}

}  // namespace

PyObject* input_error_type() { return g_input_error; }

void throw_input_error(const std::string& message) { throw ArrayInputError(message); }

void bind_errors(py::module_& m) {
  g_error = new_exception(m, "Error", PyExc_Exception, nullptr,
                          "Base of every error the workbench raises on purpose; str() is one line.");
  g_config_error = new_exception(m, "ConfigError", g_error, PyExc_ValueError,
                                 "A bad option, an unknown name, an impossible request.");
  g_input_error = new_exception(m, "InputError", g_error, PyExc_ValueError,
                                "Bad input: a file, graph, cluster, placement or array that does not validate.");
  g_parse_error = new_exception(m, "ParseError", g_input_error, nullptr, "A file or document that does not parse.");
  g_graph_error = new_exception(m, "GraphError", g_input_error, nullptr, "A graph that is not a valid step DAG.");
  g_device_error = new_exception(m, "DeviceError", g_input_error, nullptr,
                                 "A cluster or placement that names devices or links wrongly.");
  g_internal_error = new_exception(m, "InternalError", g_error, PyExc_RuntimeError,
                                   "An internal invariant broke: a bug in the workbench.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ArrayInputError& e) {
      PyErr_SetString(g_input_error, e.what());
    } catch (const ConfigError& e) {
      PyErr_SetString(g_config_error, e.what());
    } catch (const ParseError& e) {
      PyErr_SetString(g_parse_error, e.what());
    } catch (const GraphError& e) {
      PyErr_SetString(g_graph_error, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(g_device_error, e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(g_internal_error, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

Options options_from(const py::handle& object, const char* what) {
  Options out;
  if (object.is_none()) return out;
  if (!py::isinstance<py::dict>(object))
    throw ConfigError(std::string(what) + " must be a dict of option names to values, got " +
                      std::string(py::str(py::type::of(object).attr("__name__"))));
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(object)) {
    if (!py::isinstance<py::str>(key)) throw ConfigError(std::string(what) + ": option names must be strings");
    std::string text;
    if (py::isinstance<py::bool_>(value)) {
      text = value.cast<bool>() ? "true" : "false";
    } else {
      text = py::str(value).cast<std::string>();
    }
    out[key.cast<std::string>()] = text;
  }
  return out;
}

py::array_t<long long> int_array_from(const py::handle& object, const std::string& expected,
                                      const std::vector<py::ssize_t>& sizes) {
  py::array array = py::module_::import("numpy").attr("asarray")(object);
  const char kind = array.dtype().kind();
  if (kind != 'i' && kind != 'u') throw_input_error(expected + "; got dtype " + std::string(py::str(array.dtype())));
  bool fits = array.ndim() == static_cast<py::ssize_t>(sizes.size());
  for (std::size_t i = 0; fits && i < sizes.size(); ++i) fits = sizes[i] < 0 || array.shape(i) == sizes[i];
  if (!fits) {
    std::string shape = "(";
    for (py::ssize_t i = 0; i < array.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape(i));
    throw_input_error(expected + "; got shape " + shape + (array.ndim() == 1 ? ",)" : ")"));
  }
  return py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(array);
}

Placement placement_from(const py::handle& object, const OpGraph& graph, const Cluster& cluster, const char* what) {
  const auto ints = int_array_from(object,
                                   std::string(what) + " must be an integer array of shape (ops,) = (" +
                                       std::to_string(graph.num_ops()) + ",)",
                                   {graph.num_ops()});
  const long long* data = ints.data();
  Placement p(std::vector<int>(graph.num_ops(), 0));
  for (int op = 0; op < graph.num_ops(); ++op) {
    if (data[op] < 0 || data[op] >= cluster.num_devices())
      throw_input_error(std::string(what) + " puts op " + graph.op(op).name + " (index " + std::to_string(op) +
                        ") on device " + std::to_string(data[op]) + "; cluster " + cluster.name() + " has devices 0.." +
                        std::to_string(cluster.num_devices() - 1));
    p[op] = static_cast<int>(data[op]);
  }
  check_placement(graph, cluster, p, what);
  return p;
}

py::array_t<long long> int_array(const std::vector<int>& values) {
  py::array_t<long long> out(static_cast<py::ssize_t>(values.size()));
  long long* data = out.mutable_data();
  for (std::size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return out;
}

py::array_t<double> double_array(const std::vector<double>& values) {
  py::array_t<double> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

std::unique_ptr<Evaluator> make_evaluator(const std::string& name, const Options& options) {
  return EvaluatorRegistry::instance().create(name, options);
}

void bind_graph_and_cluster(py::module_& m) {
  py::class_<OpGraph, GraphPtr>(m, "Graph", "A training-step operator graph (forward, backward, update).")
      .def_property_readonly("name", &OpGraph::name)
      .def_property_readonly("source", &OpGraph::source, "Where it came from: the spec or file it was loaded from.")
      .def_property_readonly("num_ops", &OpGraph::num_ops)
      .def_property_readonly("num_edges", &OpGraph::num_edges)
      .def_property_readonly("batch", &OpGraph::batch, "Samples per step (0 when unknown).")
      .def("__len__", &OpGraph::num_ops)
      .def("__repr__",
           [](const OpGraph& g) {
             return "<aware.Graph " + g.name() + ": " + std::to_string(g.num_ops()) + " ops, " +
                    std::to_string(g.num_edges()) + " edges>";
           })
      .def("op_names",
           [](const OpGraph& g) {
             std::vector<std::string> out;
             for (const Op& op : g.ops()) out.push_back(op.name);
             return out;
           })
      .def("op_types",
           [](const OpGraph& g) {
             std::vector<std::string> out;
             for (const Op& op : g.ops()) out.push_back(op.type);
             return out;
           })
      .def(
          "op",
          [](const OpGraph& g, int index) {
            if (index < 0 || index >= g.num_ops())
              throw_input_error("op index " + std::to_string(index) + " is outside 0.." + std::to_string(g.num_ops() - 1));
            const nlohmann::json doc = graph_to_json(g);
            return json_to_python(doc.at("ops").at(index));
          },
          py::arg("index"), "The op as the graph file format writes it (a dict).")
      .def(
          "edge_index",
          [](const OpGraph& g) {
            py::array_t<long long> out({py::ssize_t{2}, static_cast<py::ssize_t>(g.num_edges())});
            auto view = out.mutable_unchecked<2>();
            for (int e = 0; e < g.num_edges(); ++e) {
              view(0, e) = g.edge(e).src;
              view(1, e) = g.edge(e).dst;
            }
            return out;
          },
          "Producer and consumer op index of every edge: int64 array of shape (2, edges).")
      .def("edge_bytes",
           [](const OpGraph& g) {
             std::vector<double> bytes;
             for (const Edge& e : g.edges()) bytes.push_back(e.bytes);
             return double_array(bytes);
           })
      .def(
          "features",
          [](const OpGraph& g, const Cluster& cluster) {
            const std::vector<float> values = rl::op_feature_matrix(g, cluster);
            py::array_t<float> out({static_cast<py::ssize_t>(g.num_ops()), py::ssize_t{rl::kOpFeatureColumns}});
            std::copy(values.begin(), values.end(), out.mutable_data());
            return out;
          },
          py::arg("cluster"), "Static per-op features, float32 (ops, feature_names()), each scaled to about [0, 1].")
      .def_static("feature_names", &rl::op_feature_names)
      .def(
          "unit_of_op",
          [](const OpGraph& g) { return int_array(placing::colocation_units(g).unit_of_op); },
          "The colocation unit of every op (ops of one colocation group share a unit and must share a device).")
      .def(
          "save", [](const OpGraph& g, const std::string& path) { write_graph_file(g, path); }, py::arg("path"),
          "Writes the graph as a JSON graph file (atomically).");

  py::class_<Cluster, ClusterPtr>(m, "Cluster", "Devices, switches and links.")
      .def_property_readonly("name", &Cluster::name)
      .def_property_readonly("num_devices", &Cluster::num_devices)
      .def("__len__", &Cluster::num_devices)
      .def("__repr__",
           [](const Cluster& c) {
             return "<aware.Cluster " + c.name() + ": " + std::to_string(c.num_devices()) + " devices>";
           })
      .def("devices", [](const Cluster& c) {
        py::list out;
        for (int d = 0; d < c.num_devices(); ++d) {
          const Device& dev = c.device(d);
          py::dict row;
          row["name"] = dev.name;
          row["kind"] = dev.kind;
          row["peak_flops"] = dev.peak_flops;
          row["efficiency"] = dev.efficiency;
          row["memory_bytes"] = dev.memory_bytes;
          row["memory_Bps"] = dev.memory_Bps;
          out.append(row);
        }
        return out;
      });

  m.def(
      "graph",
      [](const std::string& spec) {
        register_builtins();
        return std::make_shared<OpGraph>(load_graph(spec));
      },
      py::arg("spec"),
      "A graph by the CLI's spec: zoo:NAME[:key=value,...], family:FAMILY:SEED, random:N:SEED or a JSON graph file.");
  m.def(
      "cluster",
      [](const std::string& spec) {
        register_builtins();
        return std::make_shared<Cluster>(load_cluster(spec));
      },
      py::arg("spec"), "A cluster by the CLI's spec: preset:NAME or a cluster file (JSON, or SimGrid XML where built).");
  m.def(
      "list",
      [](const py::object& kind) -> py::object {
        register_builtins();
        if (kind.is_none()) {
          nlohmann::json doc = nlohmann::json::object();
          for (const std::string& k : catalogue_kinds()) doc[k] = catalogue_json(k);
          return json_to_python(doc);
        }
        return json_to_python(catalogue_json(kind.cast<std::string>()));
      },
      py::arg("kind") = py::none(),
      "What this build has, as `aware list`: evaluators, placers, agents, strategies, clusters, models, plugins. "
      "A kind gives a list of {name, description, options}; none gives every kind.");
}

}  // namespace aware::python

PYBIND11_MODULE(_aware, m) {
  m.doc() = "The Aware workbench's C++ core: graphs, clusters, simulators, placers, agents, strategies.";
  aware::register_builtins();
  aware::python::bind_errors(m);
  aware::python::bind_graph_and_cluster(m);
  aware::python::bind_run(m);
  aware::python::bind_env(m);
}
