#include "core/lists.h"

#include <set>
#include <sstream>

#include "core/errors.h"

namespace aware {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& flag, int min, int max,
                                const std::string& what) {
  std::vector<int> values;
  // "2,,4" or "2,": an empty item is a typo, not a value to skip.
  if (!text.empty() && (text.front() == ',' || text.back() == ',' || text.find(",,") != std::string::npos))
    throw ConfigError(flag + ": '" + text + "' has an empty item (each item is " + what + ")");
  for (const std::string& item : split_list(text)) {
    bool ok = false;
    int n = 0;
    try {
      size_t used = 0;
      n = std::stoi(item, &used);
      ok = used == item.size() && n >= min && n <= max;
    } catch (const std::exception&) {
      ok = false;
    }
    // A whole number outside [min, max] (past an int too) is one: say the range.
    const bool whole = item.find_first_not_of("0123456789") == std::string::npos ||
                       (item.size() > 1 && (item[0] == '-' || item[0] == '+') &&
                        item.find_first_not_of("0123456789", 1) == std::string::npos);
    if (!ok && whole)
      throw ConfigError(flag + ": '" + item + "' is out of range: " + flag + " takes " + std::to_string(min) +
                        ".." + std::to_string(max));
    if (!ok) throw ConfigError(flag + ": '" + item + "' is not " + what);
    values.push_back(n);
  }
  if (values.empty()) throw ConfigError(flag + ": give at least one (" + what + ")");
  return values;
}

Options parse_kv(const std::vector<std::string>& items, const std::string& flag) {
  Options out;
  for (const auto& kv : items) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw ConfigError(flag + " '" + kv + "' must be KEY=VALUE");
    // The same key twice would keep the last value without a word.
    if (!out.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second)
      throw ConfigError(flag + ": key '" + kv.substr(0, eq) + "' is given twice");
  }
  return out;
}

void refuse_repeated(const std::vector<std::string>& items, const std::string& flag) {
  std::set<std::string> seen;
  for (const std::string& item : items)
    if (!seen.insert(item).second)
      throw ConfigError(flag + ": '" + item + "' is given twice (each item once)");
}

void refuse_repeated(const std::vector<int>& items, const std::string& flag) {
  std::vector<std::string> text;
  for (int item : items) text.push_back(std::to_string(item));
  refuse_repeated(text, flag);
}

}  // namespace aware
