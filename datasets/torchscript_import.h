// Import a TorchScript module (torch.jit.script or torch.jit.trace, saved with
// .save()) as a training step, by the same cost rules as the ONNX importer
// (datasets/import_rules.h), so both routes give one model the same graph.
//
// How: the module is loaded, put in eval mode and frozen with its parameters
// kept as attributes (so every `self.<path>` that is a parameter stays
// recognisable, and buffers, None submodules and the training flag fold into
// constants); forward() is inlined and constant-folded; one run on zero inputs
// of the given shapes records the shape of every tensor (only the sizes are
// kept, the tensors are freed as usual); then each aten op is translated into
// ONNX's vocabulary (aten::conv2d -> Conv, aten::linear -> Gemm,
// aten::batch_norm -> BatchNormalization, ...). An aten op without a rule is
// costed by the bytes it moves and listed in the report's `uncosted`.
//
// TorchScript keeps no input shapes: every tensor argument of forward() needs an
// --input-shape (a --batch given as well must equal its first dimension), of
// at most kMaxInputElements elements. An argument that only feeds embeddings
// gets integer zeros. When forward() fails on those shapes, the error names the
// node that failed and the shapes of the tensors it read.
//
// Not done: control flow that freezing cannot fold (a prim::If or prim::Loop
// left with tensor work inside) is refused, naming the node; trace the module
// instead.
//
// Built with LibTorch (AWARE_WITH_TORCH); the header is torch-free.
#pragma once

#include <string>

#include "core/op_graph.h"
#include "datasets/model_import.h"

namespace aware {

// Throws ParseError naming the file (and the node) for a file that is not a
// TorchScript module, a module without forward(), a forward() that fails on
// inputs of the given shapes, unfoldable control flow, or a model with no
// trainable parameters; ConfigError for a missing or unknown --input-shape or an
// unknown optimizer.
OpGraph import_torchscript(const std::string& path, const ModelImportOptions& options,
                           ModelImportReport* report = nullptr);

}  // namespace aware
