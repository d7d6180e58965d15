// The learned agents' registry and factories, without LibTorch: register.cc adds
// the agents from this header alone, so it does not pay for the LibTorch headers
// (about 20 s a file). The Agent class itself is in agent.h.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/registry.h"

namespace aware::rl {

class Agent;

// config: the agent's options (networks + episode settings); num_devices: the cluster's.
using AgentFactory =
    std::function<std::unique_ptr<Agent>(const Options& config, int num_devices)>;

// Name -> factory for learned agents; entries are added by register_rl_agents()
// (agents/rl/register.cc). Thread-safe.
class AgentRegistry : public Registry<Agent, const Options&, int> {
 public:
  static AgentRegistry& instance();

 private:
  AgentRegistry() : Registry("agent") {}
};

std::unique_ptr<Agent> make_placeto_agent(const Options& config, int num_devices);
std::unique_ptr<Agent> make_hierarchical_agent(const Options& config, int num_devices);
std::unique_ptr<Agent> make_aware_agent(const Options& config, int num_devices);
// The same as AgentFactory objects, made where Agent is a complete type (agent.cc):
// wrapping a make_* function in a std::function needs it.
AgentFactory placeto_agent_factory();
AgentFactory hierarchical_agent_factory();
AgentFactory aware_agent_factory();
// The options each agent's config takes (network shapes and episode settings);
// its constructor refuses any other.
std::vector<OptionSpec> placeto_agent_options();
std::vector<OptionSpec> hierarchical_agent_options();
std::vector<OptionSpec> aware_agent_options();

}  // namespace aware::rl
