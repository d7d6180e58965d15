// Import an ONNX model as a training step: the forward ops with shapes from
// ONNX shape inference, FLOPs and bytes per op type, then the backward and
// update ops from the same GraphBuilder rules the zoo builders use, so an
// imported graph is first-class for every placer, agent, strategy, evaluator and
// the GUI. Built when Debian's libonnx-dev is found (AWARE_WITH_ONNX).
//
// Parameters are the tensors a node reads at a weight slot (Conv/ConvTranspose
// W and B, Gemm B and C, MatMul's second operand, BatchNormalization scale and
// B, LayerNormalization scale and bias, LSTM/GRU/RNN W, R and B, PRelu slope,
// an embedding Gather's table) and float initializers added or multiplied into
// activations; each comes from an initializer or, in a structure-only export
// (export_params=False), from a graph input with a shape. BatchNormalization's
// running mean and variance are buffers, not parameters. The remaining graph
// inputs are the data; the loss is a softmax cross-entropy over each graph
// output seen as {rows, classes}, against label ids.
//
// An op type without a cost rule is costed by the bytes it moves (inputs plus
// outputs, no FLOPs, a gradient op of the same bytes) and listed in the report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "datasets/model_import.h"

namespace aware {

// Throws ParseError naming the file (and the node) for a corrupt or truncated
// file, a model the ONNX checker refuses, an unsupported opset, a node whose
// output has no static shape (saying whether it depends on the data, and on
// which node), a Gemm, MatMul, Conv or normalization whose weight does not fit
// its input, or a model with no trainable parameters; and ConfigError for bad
// options (an --input-shape naming no input, a dynamic dimension without
// --batch or --input-shape, --batch disagreeing with --input-shape, an input
// over kMaxInputElements, an unknown optimizer).
OpGraph import_onnx(const std::string& path, const ModelImportOptions& options, ModelImportReport* report = nullptr);

// The same for a model held in memory (the serialized ModelProto); `name`
// stands for the file in messages. The fuzz target's entry (tests/fuzz/fuzz_onnx.cc).
OpGraph import_onnx_bytes(const std::string& bytes, const std::string& name,
                          const ModelImportOptions& options, ModelImportReport* report = nullptr);

}  // namespace aware
