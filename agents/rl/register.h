// Registers the learned agents ("placeto", "hierarchical", "aware") with the
// AgentRegistry, and each as a Placer with PlacerRegistry::instance(), so
// `aware place --method placeto` and `aware compare` run them. Idempotent. Called
// by register_builtins() (builtins/), not directly.
//
// PlaceContext mapping: evaluator (required), seed, budget_evals (0: 2000),
// budget_seconds, progress; options are the agent's options plus the trainer's:
// init=POLICY, save_policy=POLICY, threads=N, lr=X, entropy=X, algorithm=ppo,
// episodes_per_update=N, curve=CSV, resume=DIR.
#pragma once

namespace aware {

void register_rl_agents();

}  // namespace aware
