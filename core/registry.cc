#include "core/registry.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/formats.h"

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
    case OptionSpec::Type::kOutputPath:
    case OptionSpec::Type::kOutputFolder:
      return true;
  }
  return true;
}

bool has_range(const OptionSpec& spec) {
  return spec.min_value > -std::numeric_limits<double>::infinity() ||
         spec.max_value < std::numeric_limits<double>::infinity();
}

// A bound as written: 100000000, not 1e+08.
std::string bound_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.12g", value);
  return buffer;
}

// "1..4096", ">= 0", "<= 10": the range as the messages and the help text give it.
std::string range_text(const OptionSpec& spec) {
  const bool low = spec.min_value > -std::numeric_limits<double>::infinity();
  const bool high = spec.max_value < std::numeric_limits<double>::infinity();
  if (low && high) return bound_text(spec.min_value) + ".." + bound_text(spec.max_value);
  if (low) return ">= " + bound_text(spec.min_value);
  return "<= " + bound_text(spec.max_value);
}

// Refuses a parsed number that is not finite or lies outside the spec's range.
void check_number(const OptionSpec& spec, const std::string& key, const std::string& value,
                  const std::string& owner) {
  if (spec.type != OptionSpec::Type::kInt && spec.type != OptionSpec::Type::kDouble) return;
  const double number = std::strtod(value.c_str(), nullptr);
  if (!std::isfinite(number))
    throw ConfigError(owner + ": option '" + key + "' must be a finite number, got '" + value + "'");
  if (number < spec.min_value || number > spec.max_value)
    throw ConfigError(owner + ": option '" + key + "' must be " + range_text(spec) + ", got '" + value + "'");
}

}  // namespace

const char* option_type_name(OptionSpec::Type type) {
  switch (type) {
    case OptionSpec::Type::kString: return "text";
    case OptionSpec::Type::kInt: return "int";
    case OptionSpec::Type::kDouble: return "number";
    case OptionSpec::Type::kBool: return "bool";
    case OptionSpec::Type::kPath: return "path";
    case OptionSpec::Type::kOutputPath: return "path written";
    case OptionSpec::Type::kOutputFolder: return "folder written";
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
    check_number(*match, key, value, owner);
  }
}

void prepare_output_options(const Options& options, const std::vector<OptionSpec>& specs,
                            const std::string& owner) {
  for (const auto& [key, value] : options) {
    for (const OptionSpec& s : specs) {
      if (!covers(s, key)) continue;
      const std::string flag = owner + ": option '" + key + "'";
      if (s.type == OptionSpec::Type::kOutputPath) {
        prepare_output_path(value, flag);
      } else if (s.type == OptionSpec::Type::kOutputFolder && !value.empty()) {
        std::error_code ec;
        if (std::filesystem::exists(value, ec) && !std::filesystem::is_directory(value, ec))
          throw ConfigError(flag + " " + value + ": is a file, not a folder");
        create_output_folder(value, flag, value);
      }
      break;
    }
  }
}

std::string format_option_specs(const std::vector<OptionSpec>& specs, const std::string& indent) {
  std::string out;
  for (const OptionSpec& s : specs) {
    out += indent + s.name + " (" + option_type_name(s.type);
    if (!s.default_value.empty()) out += ", default " + s.default_value;
    if (has_range(s)) out += ", " + range_text(s);
    out += ")";
    if (!s.help.empty()) out += ": " + s.help;
    out += "\n";
  }
  return out;
}

}  // namespace aware
