// Internal to the Python module: what its three binding files share.
#pragma once

#include <memory>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware::python {

namespace py = pybind11;

using GraphPtr = std::shared_ptr<OpGraph>;
using ClusterPtr = std::shared_ptr<Cluster>;

// The module's exception types (set by bind_errors): aware.Error and below it
// ConfigError and InputError (both also ValueError), InputError's ParseError,
// GraphError, DeviceError, and InternalError (also RuntimeError).
PyObject* input_error_type();

// Raises aware.InputError (as a C++ exception pybind11 turns into it).
[[noreturn]] void throw_input_error(const std::string& message);

// A Python dict of options ({"mode": "placeto", "seed": 3}) as the registries'
// string options; None gives none. Values are converted with str() (bools as
// "true"/"false").
Options options_from(const py::handle& object, const char* what);

// `object` (a NumPy array or anything np.asarray takes) as a placement of `graph`
// on `cluster`: integers of shape (num_ops,); checked with check_placement.
// Raises aware.InputError naming the expected shape or dtype.
Placement placement_from(const py::handle& object, const OpGraph& graph, const Cluster& cluster,
                         const char* what = "placement");

// `object` (anything np.asarray takes) as a C-contiguous int64 array of sizes
// `sizes` (-1: any size along that axis). Raises aware.InputError "EXPECTED; got
// dtype D" for non-integers and "EXPECTED; got shape (...)" for another shape.
py::array_t<long long> int_array_from(const py::handle& object, const std::string& expected,
                                      const std::vector<py::ssize_t>& sizes);

// `values` as a 1-D NumPy array (copied).
py::array_t<long long> int_array(const std::vector<int>& values);
py::array_t<double> double_array(const std::vector<double>& values);

// A registered evaluator by name with options (ConfigError for an unknown one).
std::unique_ptr<Evaluator> make_evaluator(const std::string& name, const Options& options);

void bind_errors(py::module_& m);
void bind_graph_and_cluster(py::module_& m);
void bind_run(py::module_& m);  // simulate, evaluate_batch, place, apply_strategy
void bind_env(py::module_& m);  // EnvCore: the placement MDP (agents/rl/mdp.h)

}  // namespace aware::python
