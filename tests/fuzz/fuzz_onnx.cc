// Fuzz target: the ONNX importer (datasets/onnx_import.h) on arbitrary bytes as
// a serialized ModelProto: protobuf parsing, the ONNX checker, shape inference
// (libonnx), our Einsum sizing and operand checks, the cost rules and the
// training step, then the graph's JSON. Bad input must end in an aware::Error
// other than InternalError (a builder invariant the importer should have kept);
// a crash, a sanitizer report, another exception type or an imported graph that
// does not validate is a finding. libonnx itself is whatever Debian built (not instrumented under
// scripts/fuzz); our code around it is.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"
#include "core/op_graph.h"
#include "datasets/onnx_import.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string bytes = fuzz::input_text(data, size);
  ModelImportOptions options;
  options.batch = 2;  // a dynamic first dimension gets one; a static one is replaced
  try {
    ModelImportReport report;
    const OpGraph graph = import_onnx_bytes(bytes, "fuzz.onnx", options, &report);
    graph.validate();
    fuzz::require(graph.num_ops() > 0, "an imported step has ops");
    fuzz::require(std::isfinite(graph.total_flops()) && graph.total_flops() >= 0, "finite FLOPs");
    fuzz::require(report.params > 0, "an imported model has parameters");
    // What `aware graph import` writes next: names from the file must survive JSON.
    (void)graph_to_json(graph).dump();
  } catch (const InternalError& e) {
    // A broken invariant of the builder: the importer let through what it should refuse.
    std::fprintf(stderr, "%s\n", e.what());
    fuzz::require(false, "bad input reported as an internal error");
  } catch (const Error&) {
    // Not a model, or a model the importer refuses, reported.
  }
  return 0;
}
