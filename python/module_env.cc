// EnvCore: the placement MDP (agents/rl/mdp.h) for aware.env.PlacementEnv, which
// adds Gymnasium's API and spaces in Python. Kept thin: one C++ call per step.
#include <pybind11/stl.h>

#include "agents/rl/mdp.h"
#include "core/errors.h"
#include "python/module.h"

namespace aware::python {

namespace {

class EnvCore {
 public:
  EnvCore(GraphPtr graph, ClusterPtr cluster, const std::string& mode, const std::string& evaluator,
          const py::handle& options, const std::string& penalty, const std::string& start, long long budget_evals,
          double budget_seconds)
      : graph_(std::move(graph)), cluster_(std::move(cluster)) {
    rl::MdpOptions o;
    o.mode = rl::parse_mdp_mode(mode);
    o.penalty = rl::parse_penalty_kind(penalty);
    o.start = start;
    o.budget_evals = budget_evals;
    o.budget_seconds = budget_seconds;
    mdp_ = std::make_unique<rl::PlacementMdp>(*graph_, *cluster_, make_evaluator(evaluator, options_from(options, "options")),
                                              o);
  }

  void reset(std::uint64_t seed) { mdp_->reset(seed); }

  py::tuple step_placement(const py::handle& action) {
    const int units = mdp_->num_units();
    const auto ints = int_array_from(action,
                                     "the action must be an integer array of shape (units,) = (" + std::to_string(units) +
                                         ",), a device per colocation unit",
                                     {units});
    std::vector<int> devices(units);
    for (int u = 0; u < units; ++u) {
      const long long d = ints.data()[u];
      if (d < 0 || d >= mdp_->num_devices())
        throw_input_error("the action puts unit " + std::to_string(u) + " (op " +
                          graph_->op(first_op_of_unit(u)).name + ") on device " + std::to_string(d) +
                          "; the cluster has devices 0.." + std::to_string(mdp_->num_devices() - 1));
      devices[u] = static_cast<int>(d);
    }
    return outcome(mdp_->step_placement(devices));
  }

  py::tuple step_device(long long device) {
    if (device < 0 || device >= mdp_->num_devices())
      throw_input_error("the action is device " + std::to_string(device) + "; the cluster has devices 0.." +
                        std::to_string(mdp_->num_devices() - 1));
    return outcome(mdp_->step_device(static_cast<int>(device)));
  }

  const rl::PlacementMdp& mdp() const { return *mdp_; }
  const OpGraph& graph() const { return *graph_; }

 private:
  int first_op_of_unit(int unit) const {
    const std::vector<int>& of = mdp_->unit_of_op();
    for (int op = 0; op < static_cast<int>(of.size()); ++op)
      if (of[op] == unit) return op;
    return 0;
  }

  static py::tuple outcome(const rl::MdpStep& s) {
    return py::make_tuple(s.reward, s.terminated, s.truncated, s.evaluated, s.step_us, s.penalised_us, s.feasible);
  }

  GraphPtr graph_;
  ClusterPtr cluster_;
  std::unique_ptr<rl::PlacementMdp> mdp_;
};

}  // namespace

void bind_env(py::module_& m) {
  py::class_<EnvCore>(m, "EnvCore",
                      "The placement MDP behind aware.env.PlacementEnv (agents/rl/mdp.h); use that class instead.")
      .def(py::init<GraphPtr, ClusterPtr, const std::string&, const std::string&, const py::handle&, const std::string&,
                    const std::string&, long long, double>(),
           py::arg("graph"), py::arg("cluster"), py::arg("mode") = "one-shot", py::arg("evaluator") = "analytic",
           py::arg("options") = py::none(), py::arg("penalty") = "placeto", py::arg("start") = "random",
           py::arg("budget_evals") = 0, py::arg("budget_seconds") = 0.0)
      .def("reset", &EnvCore::reset, py::arg("seed"))
      .def("step_placement", &EnvCore::step_placement, py::arg("action"),
           "One-shot step: (reward, terminated, truncated, evaluated, step_us, penalised_us, feasible).")
      .def("step_device", &EnvCore::step_device, py::arg("device"), "Per-node step: the same tuple.")
      .def_property_readonly("num_ops", [](const EnvCore& e) { return e.mdp().num_ops(); })
      .def_property_readonly("num_units", [](const EnvCore& e) { return e.mdp().num_units(); })
      .def_property_readonly("num_devices", [](const EnvCore& e) { return e.mdp().num_devices(); })
      .def_property_readonly("position", [](const EnvCore& e) { return e.mdp().position(); })
      .def_property_readonly("current_unit", [](const EnvCore& e) { return e.mdp().current_unit(); })
      .def_property_readonly("done", [](const EnvCore& e) { return e.mdp().done(); })
      .def_property_readonly("exhausted", [](const EnvCore& e) { return e.mdp().exhausted(); })
      .def_property_readonly("current_penalised_us", [](const EnvCore& e) { return e.mdp().current_penalised_us(); })
      .def("placement", [](const EnvCore& e) { return int_array(e.mdp().placement().device_of_op); })
      .def("unit_of_op", [](const EnvCore& e) { return int_array(e.mdp().unit_of_op()); })
      .def("unit_order", [](const EnvCore& e) { return int_array(e.mdp().unit_order()); })
      .def_property_readonly("evaluations", [](const EnvCore& e) { return e.mdp().env().evaluations(); })
      .def_property_readonly("move_evaluations", [](const EnvCore& e) { return e.mdp().env().move_evaluations(); })
      .def_property_readonly("elapsed_s", [](const EnvCore& e) { return e.mdp().env().elapsed_s(); })
      .def_property_readonly("simulate_s", [](const EnvCore& e) { return e.mdp().env().simulate_s(); })
      .def_property_readonly("best_step_us", [](const EnvCore& e) { return e.mdp().env().best_step_us(); })
      .def_property_readonly("best_penalised_us", [](const EnvCore& e) { return e.mdp().env().best_penalised_us(); })
      .def_property_readonly("best_feasible", [](const EnvCore& e) { return e.mdp().env().best_feasible(); })
      .def("best_placement", [](const EnvCore& e) { return int_array(e.mdp().env().best_placement().device_of_op); });
}

}  // namespace aware::python
