#include "core/registry.h"

#include <cerrno>
#include <cstdlib>

namespace aware {
namespace {

bool covers(const OptionSpec& spec, const std::string& key) {
  const std::string& n = spec.name;
  if (n.size() >= 2 && n.compare(n.size() - 2, 2, ".*") == 0) {
    const std::string prefix = n.substr(0, n.size() - 1);  // keeps the dot
    return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0;
  }
  return n == key;
}

bool parses_as(OptionSpec::Type type, const std::string& value) {
  if (value.empty()) return type == OptionSpec::Type::kString;
  char* end = nullptr;
  errno = 0;
  switch (type) {
    case OptionSpec::Type::kInt:
      std::strtoll(value.c_str(), &end, 10);
      return *end == '\0' && errno == 0;
    case OptionSpec::Type::kDouble:
      std::strtod(value.c_str(), &end);
      return *end == '\0' && errno == 0;
    case OptionSpec::Type::kBool:
      return value == "0" || value == "1" || value == "true" || value == "false" ||
             value == "on" || value == "off";
    case OptionSpec::Type::kString:
    case OptionSpec::Type::kPath:
      return true;
  }
  return true;
}

}  // namespace

const char* option_type_name(OptionSpec::Type type) {
  switch (type) {
    case OptionSpec::Type::kString: return "text";
    case OptionSpec::Type::kInt: return "int";
    case OptionSpec::Type::kDouble: return "number";
    case OptionSpec::Type::kBool: return "bool";
    case OptionSpec::Type::kPath: return "path";
  }
  return "text";
}

void check_options_against(const Options& options, const std::vector<OptionSpec>& specs,
                           const std::string& owner) {
  for (const auto& [key, value] : options) {
    const OptionSpec* match = nullptr;
    for (const OptionSpec& s : specs) {
      if (covers(s, key)) {
        match = &s;
        break;
      }
    }
    if (match == nullptr) {
      std::string known;
      for (const OptionSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      throw ConfigError(owner + ": unknown option '" + key + "' (" +
                        (known.empty() ? std::string("it takes no options") : "known: " + known) +
                        ")");
    }
    if (!parses_as(match->type, value)) {
      throw ConfigError(owner + ": option '" + key + "' must be " +
                        (match->type == OptionSpec::Type::kBool ? std::string("a bool (0/1)")
                                                                : std::string("of type ") +
                                                                      option_type_name(match->type)) +
                        ", got '" + value + "'");
    }
  }
}

std::string format_option_specs(const std::vector<OptionSpec>& specs, const std::string& indent) {
  std::string out;
  for (const OptionSpec& s : specs) {
    out += indent + s.name + " (" + option_type_name(s.type);
    if (!s.default_value.empty()) out += ", default " + s.default_value;
    out += ")";
    if (!s.help.empty()) out += ": " + s.help;
    out += "\n";
  }
  return out;
}

}  // namespace aware
