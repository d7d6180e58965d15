#include "core/units.h"

#include <cstdio>

namespace aware {

namespace {

// One snprintf per unit: the precision of each unit is the only thing the styles vary.
std::string with_unit(double bytes, int gb_decimals, int mb_decimals, int kb_decimals) {
  char buffer[64];
  if (bytes >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.*f GB", gb_decimals, bytes / 1e9);
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
    case BytesStyle::kGigabytes: {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.3f GB", bytes / 1e9);
      return buffer;
    }
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

std::string format_fixed(double value, int decimals) {
  char buffer[512];  // "%.0f" of 1e308 is 309 digits
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string format_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

}  // namespace aware
