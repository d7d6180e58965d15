// Comma-separated lists as the command line and the experiment plans give them.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/registry.h"  // Options

namespace aware {

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

// "1,2,4" -> {1, 2, 4}, each in [min, max]. Throws ConfigError naming `flag`, the item
// and `what` ("a thread count 1..256") for anything else (for a whole number out of
// range, with the range), for an empty item ("2,,4", "2,"), or for an empty list.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag, int min, int max,
                                const std::string& what);

// Throws ConfigError naming `flag` and the first item that appears twice in
// `items` ("--collectives: 'ring' is given twice"): a repeated item would be
// run and listed twice.
void refuse_repeated(const std::vector<std::string>& items, const std::string& flag);
void refuse_repeated(const std::vector<int>& items, const std::string& flag);

// {"k=v", ...} -> Options; throws ConfigError naming `flag` for an item without '='
// or a key given twice.
Options parse_kv(const std::vector<std::string>& items, const std::string& flag);

}  // namespace aware
