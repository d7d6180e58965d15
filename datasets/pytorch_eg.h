// PyTorch's execution-graph JSON (torch.profiler.ExecutionGraphObserver, as
// Debian's python3-torch 1.13 writes it: schema 1.0.0 or 1.0.1) read into a
// training-step graph. No PyTorch needed: the file is plain JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/op_graph.h"

namespace aware {

struct ExecutionGraphImport {
  OpGraph graph;
  std::string schema;   // the file's "schema"
  int nodes = 0;        // nodes in the file
  int wrappers = 0;     // record-function scopes descended into (autograd, optimizer, modules)
  int estimated = 0;    // ops whose FLOPs come from their shapes (matrix products, convolutions)
};

// True when `doc` has the execution graph's "schema" string and "nodes" array.
bool is_pytorch_execution_graph(const nlohmann::json& doc);

// Reads the file: the ops are the outermost operator calls of every thread (a
// scope without an operator schema, such as an autograd function or
// Optimizer.step, is descended into, and names its ops' phase: backward for
// autograd, update for the optimizer); edges join a tensor's last writer to its
// readers by storage id (the file's tensors are [tensor id, storage id, offset,
// elements, element bytes(, device)]); output sizes are elements x element bytes;
// FLOPs are estimated from the shapes of matrix products and convolutions and
// one per output element otherwise. 1.13's files have no durations: the ops are
// priced by the cost model. Throws ParseError naming the file, the node and the
// field.
ExecutionGraphImport read_pytorch_execution_graph(const std::string& path);

}  // namespace aware
