#include "core/units.h"

#include <cstdio>

namespace aware {

namespace {

// Beyond this magnitude fixed notation prints a wall of digits (1e300 is 301 of
// them) that no reader counts: such values are written with an exponent instead.
constexpr double kLargestFixed = 1e12;

// `value` as "%.*f", or as "%.4e" beyond kLargestFixed, followed by `unit`.
std::string fixed_or_exponent(double value, int decimals, const char* unit) {
  char buffer[96];
  if (value >= kLargestFixed || value <= -kLargestFixed) {
    std::snprintf(buffer, sizeof buffer, "%.4e%s", value, unit);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*f%s", decimals, value, unit);
  }
  return buffer;
}

// One snprintf per unit: the precision of each unit is the only thing the styles vary.
std::string with_unit(double bytes, int gb_decimals, int mb_decimals, int kb_decimals) {
  char buffer[64];
  if (bytes >= 1e9) {
    return fixed_or_exponent(bytes / 1e9, gb_decimals, " GB");
  } else if (bytes >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.*f MB", mb_decimals, bytes / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.*f KB", kb_decimals, bytes / 1e3);
  }
  return buffer;
}

}  // namespace

std::string format_bytes(double bytes, BytesStyle style) {
  switch (style) {
    case BytesStyle::kTable:
      return with_unit(bytes, 2, 2, 1);
    case BytesStyle::kCompact:
      return with_unit(bytes, 2, 1, 0);
    case BytesStyle::kGigabytes:
      return fixed_or_exponent(bytes / 1e9, 3, " GB");
  }
  return with_unit(bytes, 2, 2, 1);  // unreachable: every style is handled above
}

std::string format_memory_shortfall(double needs_bytes, double has_bytes) {
  char needs[64], has[64];
  for (int decimals = 3;; ++decimals) {
    std::snprintf(needs, sizeof needs, "%.*f GB", decimals, needs_bytes / 1e9);
    std::snprintf(has, sizeof has, "%.*f GB", decimals, has_bytes / 1e9);
    if (std::string(needs) != has || decimals >= 9) break;
  }
  return std::string("needs ") + needs + ", has " + has;
}

std::string format_ms(double us) {
  char buffer[64];
  // Beyond a billion ms, fixed notation prints dozens of digits: use an exponent.
  std::snprintf(buffer, sizeof buffer, us / 1e3 < 1e9 ? "%.3f ms" : "%.4e ms", us / 1e3);
  return buffer;
}

std::string format_fixed(double value, int decimals) { return fixed_or_exponent(value, decimals, ""); }

std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

}  // namespace aware
