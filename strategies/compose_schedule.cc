// compose_schedule (strategies/representative.h): a pipeline's schedule composed
// from each stage's (each chunk's) pass blocks and the links between them, one
// pass at a time per stage in stage_order's order. Its own file: the
// representative simulation calls it, and its tests build blocks by hand.
#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"
#include "strategies/representative.h"
#include "strategies/rewrite.h"

namespace aware {

using strategies_detail::Pass;

ComposedSchedule compose_schedule(const std::vector<PipelineBlocks>& blocks, const std::vector<PipelineLink>& links,
                                  const std::string& schedule, int micro, int chunks) {
  const int V = std::max(1, chunks), pieces = static_cast<int>(blocks.size()), P = pieces / V, M = micro;
  if (P < 1 || M < 1 || P * V != pieces)
    throw ConfigError("compose_schedule: needs a stage and a micro-batch, and a block per stage and chunk");
  for (const PipelineLink& l : links)
    if (l.from < 0 || l.from >= pieces || l.to < 0 || l.to >= pieces || l.from == l.to)
      throw ConfigError("compose_schedule: a link from stage " + std::to_string(l.from) + " to " + std::to_string(l.to) +
                        " of " + std::to_string(pieces));
  // Piece c (chunk c / P of stage c mod P) is block c.
  std::vector<std::vector<Pass>> passes(P);
  std::vector<std::vector<char>> piece_last(P);  // a pass is its piece's last on the stage
  for (int st = 0; st < P; ++st) {
    passes[st] = strategies_detail::stage_order(schedule, V, st, P, M);
    piece_last[st].assign(passes[st].size(), 0);
    std::vector<char> seen(V, 0);
    for (std::size_t k = passes[st].size(); k-- > 0;)
      if (!seen[passes[st][k].chunk]) seen[passes[st][k].chunk] = 1, piece_last[st][k] = 1;
  }
  std::vector<std::vector<double>> arrive_f(pieces, std::vector<double>(M, 0)), arrive_b(pieces, std::vector<double>(M, 0));
  std::vector<std::vector<int>> waits_f(pieces, std::vector<int>(M, 0)), waits_b(pieces, std::vector<int>(M, 0));
  for (const PipelineLink& l : links)
    for (int m = 0; m < M; ++m) ++(l.forward ? waits_f : waits_b)[l.to][m];
  std::vector<double> link_free(links.size(), 0), device_free(P, 0);
  for (int st = 0; st < P; ++st) device_free[st] = blocks[st].setup_us;  // (chunk 0's block has the stage's setup)
  ComposedSchedule out;
  out.passes_end_us.assign(P, 0);
  out.end_us.assign(P, 0);
  out.in_flight.assign(P, 0);
  std::vector<std::size_t> next(P, 0);
  std::vector<int> held(P, 0);
  std::size_t left = 0;
  for (int st = 0; st < P; ++st) left += passes[st].size();
  // Each stage runs its passes in its order, one at a time; a pass starts when
  // the stage is free and every link into it has delivered its micro-batch. A
  // link sends a pass's tensors `offset` after the pass starts, one micro-batch
  // after another (`busy` each).
  while (left > 0) {
    bool moved = false;
    for (int st = 0; st < P; ++st) {
      while (next[st] < passes[st].size()) {
        const Pass& p = passes[st][next[st]];
        const int piece = p.chunk * P + st;
        if ((p.forward ? waits_f : waits_b)[piece][p.micro] > 0) break;
        const double start = std::max(device_free[st], (p.forward ? arrive_f : arrive_b)[piece][p.micro]);
        const bool final_pass = next[st] + 1 == passes[st].size();
        const bool last = piece_last[st][next[st]] != 0;  // (the stage's final pass is one)
        const PipelineBlocks& block = blocks[piece];
        const double span = last ? block.last_us : p.forward ? block.forward_us : block.backward_us;
        device_free[st] = start + span;
        if (final_pass) {
          out.passes_end_us[st] = start + (p.forward ? block.forward_us : block.backward_us);
          out.end_us[st] = start + span;
        }
        held[st] += p.forward ? 1 : -1;
        out.in_flight[st] = std::max(out.in_flight[st], held[st]);
        for (std::size_t k = 0; k < links.size(); ++k) {
          if (links[k].from != piece || links[k].forward != p.forward) continue;
          const double sent =
              std::max(start + (last ? links[k].offset_last_us : links[k].offset_us), link_free[k] + links[k].busy_us);
          link_free[k] = sent;
          auto& arrive = p.forward ? arrive_f : arrive_b;
          arrive[links[k].to][p.micro] = std::max(arrive[links[k].to][p.micro], sent);
          --(p.forward ? waits_f : waits_b)[links[k].to][p.micro];
        }
        ++next[st], --left, moved = true;
      }
    }
    if (!moved)
      throw ConfigError("compose_schedule: the " + schedule + " schedule deadlocks on these links (a stage waits "
                        "for a later one in its own pass direction)");
  }
  for (int st = 0; st < P; ++st) out.step_us = std::max(out.step_us, out.end_us[st]);
  return out;
}

}  // namespace aware
