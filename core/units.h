// Human-readable numbers for tables, status lines and error messages: the one
// byte, millisecond and plain-number formatter every layer uses (CLI, GUI,
// agents, simulators). Thread-safe, no state; nothing here throws.
#pragma once

#include <string>

namespace aware {

// How format_bytes writes a size. Decimal units (1 GB = 1e9 bytes).
enum class BytesStyle {
  // The CLI's tables: GB and MB with 2 decimals, KB with 1 ("1.23 GB", "45.67 MB", "8.9 KB").
  kTable,
  // The GUI's status lines: GB with 2 decimals, MB with 1, KB with 0
  // ("1.23 GB", "45.7 MB", "9 KB").
  kCompact,
  // Always gigabytes with 3 decimals ("0.012 GB"): the simulators' memory messages,
  // where needs and capacities must read in the same unit.
  kGigabytes,
};

// `bytes` in `style`; GB from 1e9 bytes up, MB from 1e6, KB below (kTable, kCompact).
// From 1e12 GB up the number has an exponent ("1.0000e+291 GB"), as in format_fixed.
// The style has no default on purpose: every caller says which output it keeps.
std::string format_bytes(double bytes, BytesStyle style);

// "needs X GB, has Y GB" for a memory message, both in GB and with as many
// decimals (3 to 9) as it takes for the two to read differently: a need just
// over the capacity never reads "needs 0.120 GB, has 0.120 GB".
std::string format_memory_shortfall(double needs_bytes, double has_bytes);

// `us` microseconds as "12.345 ms" (an exponent beyond a billion ms).
std::string format_ms(double us);

// `value` with exactly `decimals` digits after the point and no unit, as printf's
// "%.*f" writes it ("0.12", "45.7", "3"): table cells whose unit is in the header.
// From 1e12 in magnitude, "%.4e" ("4.6125e+299"): never hundreds of digits.
std::string format_fixed(double value, int decimals);

// `value` as printf's "%g" (and an ostream's default) writes it: six significant
// digits, no trailing zeros ("2", "0.5", "1e+09"), for numbers echoed in messages.
std::string format_number(double value);

}  // namespace aware
