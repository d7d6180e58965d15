// TorchScript's aten ops in ONNX's vocabulary, for the TorchScript importer
// (datasets/torchscript_import.cc): which ONNX op type the cost rules
// (datasets/import_rules.h) see for an aten op, and which aten input feeds each
// ONNX input slot. A plain table: no LibTorch header here or behind it.
// Thread-safe (the table is built once, then only read).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aware::datasets_detail {

// An aten op in ONNX's vocabulary: the ONNX op type and, by ONNX input slot,
// the aten input it takes (-1: none).
struct AtenRule {
  std::string onnx;
  std::vector<int> slots;
};

// The rule for an aten op named without namespace or in-place underscore
// ("conv2d", "linear", "relu"); nullopt for an op without one (costed by the
// bytes it moves). aten::_convolution maps to Conv; the importer turns it into
// ConvTranspose when its `transposed` argument says so. Throws nothing.
std::optional<AtenRule> aten_rule(const std::string& aten);

}  // namespace aware::datasets_detail
