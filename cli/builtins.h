// Registers every evaluator and placer this build contains, so the CLI, the
// experiments and the GUI can pick them by name. Idempotent and thread-safe.
#pragma once

namespace aware {
void register_builtins();
}
