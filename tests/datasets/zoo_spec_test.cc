// Zoo models scaled from a graph spec, "zoo:NAME:key=value,...": the options reach
// the builder, the spec is the graph's source, bad keys and values are refused
// naming the spec and the key, and each model's declared keys are the ones it reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"
#include "datasets/load.h"
#include "datasets/zoo.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

const char* const kValidKeys = "batch, seq_len, hidden, layers, vocab, image_size";

double total_flops(const OpGraph& graph) {
  double total = 0;
  for (const Op& op : graph.ops()) total += op.flops;
  return total;
}

// Expects load_graph(spec) to throw ConfigError mentioning every fragment.
void expect_spec_error(const std::string& spec, const std::vector<std::string>& fragments) {
  SCOPED_TRACE(spec);
  testing::expect_error<ConfigError>([&] { load_graph(spec); }, fragments);
}

TEST(ZooSpec, OptionsReachTheBuilder) {
  ModelOptions options;
  options.batch = 1;
  options.image_size = 96;
  const OpGraph built = build_zoo_model("inception_v3", options);
  const OpGraph loaded = load_graph("zoo:inception_v3:batch=1,image_size=96");
  EXPECT_EQ(graph_to_json(loaded).dump(), graph_to_json(built).dump());
  EXPECT_NE(graph_to_json(loaded).dump(), graph_to_json(load_graph("zoo:inception_v3")).dump());
}

TEST(ZooSpec, SourceIsTheFullSpecAndTheNameTheModel) {
  const OpGraph g = load_graph("zoo:resnet50:image_size=96,batch=2");
  EXPECT_EQ(g.source(), "zoo:resnet50:image_size=96,batch=2");
  EXPECT_EQ(g.name(), "resnet50");
  EXPECT_EQ(load_graph("zoo:resnet50").source(), "zoo:resnet50");
}

TEST(ZooSpec, StemConvolutionHasTheHandComputedFlops) {
  // ResNet-50's stem: 7x7 conv, stride 2, 3 -> 64 channels; a 96x96 image gives
  // 48x48 outputs, so 2 * N * 48 * 48 * 64 * 3 * 7 * 7 flops = 43,352,064 * N.
  for (int batch : {2, 4}) {
    const OpGraph g = load_graph("zoo:resnet50:batch=" + std::to_string(batch) + ",image_size=96");
    const int conv = g.find("stem/conv1");
    ASSERT_GE(conv, 0);
    EXPECT_DOUBLE_EQ(g.op(conv).flops, 43352064.0 * batch) << "batch " << batch;
  }
}

TEST(ZooSpec, HalvingTheBatchHalvesTheForwardFlopsOfACnn) {
  auto forward = [](const OpGraph& g) {
    double total = 0;
    for (const Op& op : g.ops())
      if (op.phase == Phase::kForward) total += op.flops;
    return total;
  };
  const double two = forward(load_graph("zoo:resnet50:batch=2,image_size=64"));
  const double four = forward(load_graph("zoo:resnet50:batch=4,image_size=64"));
  EXPECT_GT(two, 0);
  EXPECT_DOUBLE_EQ(2 * two, four);
}

TEST(ZooSpec, BadKeysAndValuesNameTheSpecAndTheKey) {
  expect_spec_error("zoo:resnet50:bach=2",
                    {"zoo:resnet50:bach=2", "unknown key 'bach'", kValidKeys});
  expect_spec_error("zoo:resnet50:batch=0", {"zoo:resnet50:batch=0", "'batch'", "'0'", kValidKeys});
  for (const char* junk :
       {"two", "-1", "", "1e3", "2.5", " 2", "99999999999999999999", "1000001"}) {
    const std::string spec = std::string("zoo:resnet50:batch=") + junk;
    expect_spec_error(spec, {spec, "key 'batch'", "positive integer", kValidKeys});
  }
  expect_spec_error("zoo:resnet50:batch", {"'batch' is not key=value", kValidKeys});
  expect_spec_error("zoo:resnet50:", {"zoo:resnet50:", "expected key=value", kValidKeys});
  expect_spec_error("zoo:resnet50:batch=1,", {"'' is not key=value"});
  expect_spec_error("zoo:resnet50:batch=1,batch=2", {"key 'batch' is given twice"});
  // A key the model would silently ignore.
  expect_spec_error("zoo:resnet50:seq_len=10", {"zoo:resnet50:seq_len=10", "key 'seq_len'",
                                                "does not use", "batch, image_size"});
  expect_spec_error("zoo:nope:batch=1", {"unknown zoo model 'nope'", "resnet50"});
}

// The declared keys are exactly those the builder reads: setting a declared key
// changes the graph, setting any other leaves it as it was.
TEST(ZooSpec, EachModelReadsExactlyItsDeclaredKeys) {
  const std::map<std::string, int> small = {{"batch", 3},    {"seq_len", 3}, {"hidden", 64}, {"layers", 2},
                                            {"vocab", 100},  {"image_size", 96}, {"heads", 4},  {"kv_heads", 2},
                                            {"ffn", 64},     {"experts", 2},  {"top_k", 1},
                                            {"bits", 16}};  // doubled: 32
  std::vector<std::string> models = zoo_model_names();
  models.push_back("mixtral-8x7b");  // the one size with the mixture's keys
  for (const std::string& name : models) {
    const std::vector<std::string> used = zoo_model_option_keys(name);
    ModelOptions base;
    for (const std::string& key : used) *model_option_field(base, key) = small.at(key);
    const OpGraph reference = build_zoo_model(name, base);
    const std::string reference_json = graph_to_json(reference).dump();
    for (const std::string& key : model_option_keys()) {
      ModelOptions changed = base;
      int* field = model_option_field(changed, key);
      ASSERT_NE(field, nullptr) << key;
      *field = 2 * small.at(key);
      const bool declared = std::find(used.begin(), used.end(), key) != used.end();
      const bool differs = graph_to_json(build_zoo_model(name, changed)).dump() != reference_json;
      EXPECT_EQ(differs, declared) << name << " key " << key;
    }
  }
}

}  // namespace
}  // namespace aware
