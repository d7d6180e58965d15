#include "core/placer.h"

#include "core/errors.h"

namespace aware {
namespace {

class OptionCheckedPlacer final : public Placer {
 public:
  OptionCheckedPlacer(std::unique_ptr<Placer> inner, std::vector<OptionSpec> options,
                      std::string owner)
      : inner_(std::move(inner)), options_(std::move(options)), owner_(std::move(owner)) {}
  std::string name() const override { return inner_->name(); }
  bool needs_evaluator() const override { return inner_->needs_evaluator(); }
  bool runs_as_chains() const override { return inner_->runs_as_chains(); }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_options_against(context.options, options_, owner_);
    // An unwritable save_policy or curve fails now, not after the training.
    prepare_output_options(context.options, options_, owner_);
    if (context.exchange != nullptr && !inner_->runs_as_chains())
      throw ConfigError(inner_->name() + " does not run as parallel chains (anneal, random-search and random-sampling do)");
    return inner_->place(graph, cluster, context);
  }

 private:
  std::unique_ptr<Placer> inner_;
  std::vector<OptionSpec> options_;
  std::string owner_;
};

}  // namespace

PlacerRegistry& PlacerRegistry::instance() {
  static PlacerRegistry registry;
  return registry;
}

std::unique_ptr<Placer> PlacerRegistry::create(const std::string& name) const {
  RegistryInfo entry = info(name);
  return std::make_unique<OptionCheckedPlacer>(Registry::create(name), std::move(entry.options),
                                               "method '" + name + "'");
}

}  // namespace aware
