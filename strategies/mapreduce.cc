// mapreduce: one synchronous iteration as a Hadoop job (being written).
#include "core/errors.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

StrategyResult apply_mapreduce(const OpGraph&, const Cluster&, const StrategySpec& spec,
                               const StrategyContext&) {
  throw ConfigError("strategy '" + spec.text + "': mapreduce is not built yet");
}

}  // namespace aware::strategies_detail
