#include "datasets/aten_rules.h"

#include <map>
#include <utility>

namespace aware::datasets_detail {

std::optional<AtenRule> aten_rule(const std::string& aten) {
  static const std::map<std::string, AtenRule> rules = [] {
    std::map<std::string, AtenRule> r;
    for (const char* c : {"conv1d", "conv2d", "conv3d"}) r[c] = {"Conv", {0, 1, 2}};
    for (const char* c : {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}) r[c] = {"ConvTranspose", {0, 1, 2}};
    r["_convolution"] = r["convolution"] = {"Conv", {0, 1, 2}};  // ConvTranspose when `transposed`
    r["linear"] = {"Gemm", {0, 1, 2}};
    r["addmm"] = {"Gemm", {1, 2, 0}};
    for (const char* c : {"matmul", "mm", "bmm"}) r[c] = {"MatMul", {0, 1}};
    r["batch_norm"] = {"BatchNormalization", {0, 1, 2, 3, 4}};
    r["layer_norm"] = {"LayerNormalization", {0, 2, 3}};
    r["group_norm"] = {"InstanceNormalization", {0, 2, 3}};
    r["instance_norm"] = {"InstanceNormalization", {0, 1, 2}};
    const std::pair<const char*, const char*> unary[] = {
        {"relu", "Relu"},       {"relu6", "Clip"},       {"hardtanh", "Clip"},         {"clamp", "Clip"},
        {"clip", "Clip"},       {"leaky_relu", "LeakyRelu"}, {"abs", "Abs"},          {"neg", "Neg"},
        {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"},        {"elu", "Elu"},               {"selu", "Selu"},
        {"softplus", "Softplus"}, {"gelu", "Gelu"},      {"silu", "Silu"},             {"hardswish", "HardSwish"},
        {"hardsigmoid", "HardSigmoid"}, {"mish", "Mish"}, {"exp", "Exp"},             {"log", "Log"},
        {"sqrt", "Sqrt"},       {"rsqrt", "Reciprocal"}, {"reciprocal", "Reciprocal"}, {"erf", "Erf"},
        {"softmax", "Softmax"}, {"log_softmax", "LogSoftmax"}, {"mean", "ReduceMean"}, {"sum", "ReduceSum"},
        {"amax", "ReduceMax"},  {"max_pool1d", "MaxPool"}, {"max_pool2d", "MaxPool"}, {"max_pool3d", "MaxPool"},
        {"max_pool2d_with_indices", "MaxPool"}, {"avg_pool1d", "AveragePool"}, {"avg_pool2d", "AveragePool"},
        {"avg_pool3d", "AveragePool"}};
    for (const auto& [a, o] : unary) r[a] = {o, {0}};
    r["prelu"] = {"PRelu", {0, 1}};
    r["pow"] = {"Pow", {0, 1}};
    const std::pair<const char*, const char*> binary[] = {{"add", "Add"}, {"sub", "Sub"},     {"rsub", "Sub"},
                                                          {"mul", "Mul"}, {"div", "Div"},     {"maximum", "Max"},
                                                          {"minimum", "Min"}};
    for (const auto& [a, o] : binary) r[a] = {o, {0, 1}};
    r["where"] = {"Where", {0, 1, 2}};
    for (const char* c : {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"}) r[c] = {"GlobalAveragePool", {0}};
    for (const char* c : {"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}) r[c] = {"GlobalMaxPool", {0}};
    r["embedding"] = {"Gather", {0, 1}};
    for (const char* c : {"flatten", "view", "reshape", "squeeze", "unsqueeze", "contiguous", "dropout",
                          "feature_dropout", "alpha_dropout", "detach", "clone", "to", "type_as", "view_as",
                          "reshape_as", "identity"})
      r[c] = {"Identity", {0}};
    for (const char* c : {"t", "transpose", "permute", "numpy_T"}) r[c] = {"Transpose", {0}};
    for (const char* c : {"slice", "select", "narrow", "index_select"}) r[c] = {"Slice", {0}};
    for (const char* c : {"chunk", "split", "unbind", "split_with_sizes"}) r[c] = {"Split", {0}};
    for (const char* c : {"constant_pad_nd", "pad", "reflection_pad2d", "replication_pad2d"}) r[c] = {"Pad", {0}};
    for (const char* c : {"upsample_nearest2d", "upsample_bilinear2d", "interpolate"}) r[c] = {"Resize", {0}};
    r["expand"] = {"Expand", {0}};
    r["repeat"] = {"Tile", {0}};
    r["gather"] = {"GatherElements", {0, 2}};
    return r;
  }();
  const auto it = rules.find(aten);
  if (it == rules.end()) return std::nullopt;
  return it->second;
}


}  // namespace aware::datasets_detail
