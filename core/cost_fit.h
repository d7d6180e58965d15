// Cost fits: what an op that was never profiled costs, learnt from the ops that
// were. For each device kind of a cost table and each op type with enough
// profiled ops, a least-squares fit of
//
//   µs = overhead + us_per_flop * flops + us_per_byte * bytes_accessed
//
// (the roofline's two terms as a sum, with a fixed cost per op; every coefficient
// >= 0), in relative error, so that a 5 µs op weighs as much as a 5 ms one. A type
// with fewer ops than `min_samples` (or all of one size) takes the kind's pooled
// fit over every profiled op, scaled by the median ratio of its own ops' times to
// that fit; a type never profiled takes the pooled fit as it is ("*").
//
// Why a fit and not the device's roofline: a calibrated device has one
// efficiency, but an op kind's achieved rate depends on the kind (an LSTM cell's
// small GEMMs against a convolution's large one) and on its size (a launch-bound
// kernel costs the same whatever its FLOPs). A table profiled on one batch then
// prices the same model at another batch, a strategy's replicas ("r0/...") and
// models never profiled from the kinds of op it has seen.
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/cost_model.h"

namespace aware {

class OpGraph;

// One profiled op: its type and size and its measured time on one device kind.
struct CostSample {
  std::string type;
  double flops = 0;
  double bytes = 0;
  double us = 0;
};

struct CostFitOptions {
  int min_samples = 4;        // a type's own fit needs this many ops of >= 2 sizes
  double floor_us = 1.0;      // relative errors are taken against max(us, floor_us)
};

// Fits for one device kind: one per type (own or scaled) and "*" (pooled).
// Empty when `samples` is empty. Throws nothing.
std::map<std::string, CostFit> fit_cost_samples(const std::vector<CostSample>& samples,
                                                const CostFitOptions& options = {});

// The samples a table's entries give for `graphs` (each op's entry on each kind
// the table has, scoped entries first, as the simulators look them up), grouped
// by device kind; ops with no entry add nothing.
std::map<std::string, std::vector<CostSample>> cost_samples(const CostTable& table,
                                                            const std::vector<OpGraph>& graphs);

// Replaces `table`'s fits by those fitted to its entries for `graphs`; returns
// the number of samples used. Kinds with no sample get no fit.
int fit_cost_table(CostTable& table, const std::vector<OpGraph>& graphs,
                   const CostFitOptions& options = {});

// A table for `target`, the same model as `profiled` at another size (another
// batch or sequence length), from `table`'s profile of `profiled`: each op of
// `target` whose name `profiled` has, and which `table` prices on a kind, gets
// that entry times the ratio of its type's fit at the new size to the fit at the
// old one (1 where the fit gives 0), scoped to `target`'s name. So the op keeps
// what its own profile knows (a parameter read that no size feature sees, a
// kernel slower than its type) and the fit says only how it grows. Ops that
// `profiled` lacks get no entry (the fits, copied, price them). `scaled`, when
// non-null, receives the number of (op, kind) entries made.
CostTable scale_cost_table(const CostTable& table, const OpGraph& profiled, const OpGraph& target,
                           int* scaled = nullptr);

}  // namespace aware
