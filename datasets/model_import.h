// What every model importer (ONNX in datasets/onnx_import.h, TorchScript in
// datasets/torchscript_import.h) takes and reports. Plain types: no ONNX,
// protobuf or LibTorch header behind them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aware {

// The most elements one data input may have (2^31, 8 GiB of float32): the
// TorchScript importer runs forward() once on zeros of that shape, and a shape
// past this is a typo rather than a model (99999999999x99999999999 overflows
// any element count). Both importers refuse a larger input up front.
constexpr double kMaxInputElements = 2147483648.0;

struct ModelImportOptions {
  // Replaces a data input's first dimension (ONNX: also a dynamic one); 0: keep
  // the shape given. With --input-shape for the same input, both must agree.
  double batch = 0;
  std::map<std::string, std::vector<std::int64_t>> input_shapes;  // data input NAME -> full shape
  std::string optimizer = "momentum";                              // sgd, momentum, rmsprop, adam
};

struct ModelImportReport {
  int nodes = 0;                        // source nodes read (ONNX nodes; TorchScript graph nodes after inlining)
  int static_nodes = 0;                 // shape, constant and bookkeeping computations: no op in the step
  double params = 0;                    // trainable parameter elements
  std::map<std::string, int> uncosted;  // op type -> nodes costed by the bytes they move (no cost rule)
  std::vector<std::string> data_inputs;  // with their shapes, "x[8,3,224,224]"
};

}  // namespace aware
