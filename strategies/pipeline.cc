// pipeline: S stages, M micro-batches (being written).
#include "core/errors.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

StrategyResult apply_pipeline(const OpGraph&, const Cluster&, const StrategySpec& spec,
                              const StrategyContext&) {
  throw ConfigError("strategy '" + spec.text + "': pipeline is not built yet");
}

}  // namespace aware::strategies_detail
