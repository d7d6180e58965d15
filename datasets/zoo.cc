// The zoo registry: model name -> builder. Builders live one family per file.
#include "datasets/zoo.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/errors.h"
#include "datasets/gpt.h"
#include "datasets/models.h"

namespace aware {
namespace {

using datasets_detail::Optimizer;
using datasets_detail::option_or;
using datasets_detail::Seq2SeqConfig;
using Builder = std::function<OpGraph(const ModelOptions&)>;

// NMT as in ColocRL / Hierarchical: 2, 4 or 8 layers per stack, 1024 hidden units.
OpGraph build_nmt(int default_layers, const std::string& name, const ModelOptions& options) {
  Seq2SeqConfig config;
  config.name = name;
  config.batch = option_or(options.batch, 128);
  config.seq_len = option_or(options.seq_len, 40);
  config.hidden = option_or(options.hidden, 1024);
  config.layers = option_or(options.layers, default_layers);
  config.vocab = option_or(options.vocab, 40000);
  config.optimizer = Optimizer::kSgd;
  return datasets_detail::build_seq2seq(config);
}

// GNMT (Wu et al. 2016): 8 + 8 layers, 1024 units, 32k wordpieces, Adam.
OpGraph build_gnmt(const ModelOptions& options) {
  Seq2SeqConfig config;
  config.name = "gnmt";
  config.batch = option_or(options.batch, 128);
  config.seq_len = option_or(options.seq_len, 30);
  config.hidden = option_or(options.hidden, 1024);
  config.layers = option_or(options.layers, 8);
  config.vocab = option_or(options.vocab, 32000);
  config.gnmt = true;
  config.optimizer = Optimizer::kAdam;
  return datasets_detail::build_seq2seq(config);
}

// A builder and the ModelOptions fields it reads, so that a graph spec can refuse
// a key the model would silently ignore (zoo:nmt2:image_size=96).
struct ZooEntry {
  Builder build;
  std::vector<std::string> keys;
};

const std::map<std::string, ZooEntry>& registry() {
  const std::vector<std::string> cnn = {"batch", "image_size"};
  const std::vector<std::string> seq = {"batch", "seq_len", "hidden", "layers", "vocab"};
  static const std::map<std::string, ZooEntry> builders = {
      {"inception_v3", {datasets_detail::build_inception_v3, cnn}},
      {"resnet50",
       {[](const ModelOptions& o) { return datasets_detail::build_resnet(50, o); }, cnn}},
      {"resnet101",
       {[](const ModelOptions& o) { return datasets_detail::build_resnet(101, o); }, cnn}},
      {"resnet152",
       {[](const ModelOptions& o) { return datasets_detail::build_resnet(152, o); }, cnn}},
      {"nasnet", {datasets_detail::build_nasnet, {"batch", "layers", "image_size"}}},
      {"nmt2", {[](const ModelOptions& o) { return build_nmt(2, "nmt2", o); }, seq}},
      {"nmt4", {[](const ModelOptions& o) { return build_nmt(4, "nmt4", o); }, seq}},
      {"nmt8", {[](const ModelOptions& o) { return build_nmt(8, "nmt8", o); }, seq}},
      {"gnmt", {build_gnmt, seq}},
      {"rnnlm", {datasets_detail::build_rnnlm, seq}},
      {"transformer", {datasets_detail::build_transformer, seq}},
  };
  static const std::map<std::string, ZooEntry> with_gpt = [] {
    std::map<std::string, ZooEntry> all = builders;
    const std::vector<std::string> lm = {"batch", "seq_len", "hidden", "layers", "vocab", "heads", "kv_heads", "ffn", "bits"};
    std::vector<std::string> moe = lm;
    moe.push_back("experts");
    moe.push_back("top_k");
    const auto entry = [&](const datasets_detail::GptConfig& base) {
      return ZooEntry{[base](const ModelOptions& o) {
                        datasets_detail::GptConfig c = base;
                        c.batch = option_or(o.batch, c.batch);
                        c.seq_len = option_or(o.seq_len, c.seq_len);
                        c.hidden = option_or(o.hidden, c.hidden);
                        c.layers = option_or(o.layers, c.layers);
                        c.vocab = option_or(o.vocab, c.vocab);
                        c.heads = option_or(o.heads, c.heads);
                        // kv_heads follows heads unless given (or the size groups them).
                        c.kv_heads = option_or(o.kv_heads, base.kv_heads == base.heads ? c.heads : c.kv_heads);
                        c.ffn = option_or(o.ffn, o.hidden > 0 && !base.swiglu ? 4 * c.hidden : c.ffn);
                        c.bits = option_or(o.bits, c.bits);
                        if (base.experts > 0) {  // only the mixtures read these
                          c.experts = option_or(o.experts, c.experts);
                          c.top_k = option_or(o.top_k, c.top_k);
                        }
                        return datasets_detail::build_gpt(c);
                      },
                      base.experts > 0 ? moe : lm};
    };
    datasets_detail::GptConfig plain = datasets_detail::gpt_sizes().front().config;  // GPT-3 Small
    plain.name = "gpt";
    all.emplace("gpt", entry(plain));
    for (const datasets_detail::GptSize& size : datasets_detail::gpt_sizes()) all.emplace(size.config.name, entry(size.config));
    return all;
  }();
  return with_gpt;
}

const ZooEntry& find_entry(const std::string& name) {
  const auto& builders = registry();
  auto it = builders.find(name);
  if (it == builders.end()) {
    std::string known;
    for (const std::string& n : zoo_model_names()) known += (known.empty() ? "" : ", ") + n;
    known += " and the language-model sizes";
    for (const std::string& n : zoo_language_model_sizes()) known += (known.back() == 's' ? " " : ", ") + n;
    throw ConfigError("unknown zoo model '" + name + "'; known models: " + known);
  }
  return it->second;
}

// The most ops a zoo graph may have, as for random:N (datasets/README.md): a
// million-op graph builds in a few seconds and about 1 GB, and its JSON is the
// largest that `aware bench read` measures (docs/performance.md).
constexpr double kMaxZooOps = 1000000;

std::string with_commas(double value) {
  std::string digits = std::to_string(static_cast<long long>(value));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

// Refuses options whose graph would pass kMaxZooOps, before building it: the op
// count grows only with `layers` (a stack or a cell per layer) and `seq_len` (an
// unrolled step per token), linearly in each and so bilinearly in both, so builds
// at 2 and 3 give the count at any size (within a few ops) in milliseconds.
void check_zoo_size(const std::string& name, const ZooEntry& entry, const ModelOptions& options) {
  const auto uses = [&](const std::string& key) {
    return std::find(entry.keys.begin(), entry.keys.end(), key) != entry.keys.end();
  };
  const bool layers = uses("layers") && options.layers > 0;
  const bool seq_len = uses("seq_len") && options.seq_len > 0;
  if (!layers && !seq_len) return;
  const auto ops_at = [&](int layer_count, int steps) {
    ModelOptions probe = options;
    if (layers) probe.layers = layer_count;
    if (seq_len) probe.seq_len = steps;
    return static_cast<double>(entry.build(probe).num_ops());
  };
  const double base = ops_at(2, 2);
  const double per_layer = layers ? ops_at(3, 2) - base : 0;
  const double per_step = seq_len ? ops_at(2, 3) - base : 0;
  const double per_both = layers && seq_len ? ops_at(3, 3) - base - per_layer - per_step : 0;
  const double l = layers ? options.layers - 2.0 : 0, s = seq_len ? options.seq_len - 2.0 : 0;
  const double estimate = base + per_layer * l + per_step * s + per_both * l * s;
  if (estimate <= kMaxZooOps) return;
  std::string given;
  if (layers) given = "layers=" + std::to_string(options.layers);
  if (seq_len) given += (given.empty() ? "" : " and ") + std::string("seq_len=") +
                        std::to_string(options.seq_len);
  std::string most;
  if (layers != seq_len) {
    // The largest value of the one key that stays within the limit.
    const double slope = layers ? per_layer : per_step;
    if (slope > 0) {
      const double top = 2 + std::floor((kMaxZooOps - base) / slope);
      most = "; " + std::string(layers ? "layers" : "seq_len") + " up to " + with_commas(top) +
             " here";
    }
  }
  throw ConfigError("zoo model '" + name + "': " + given + " would make about " +
                    with_commas(estimate) + " ops, above the limit of " + with_commas(kMaxZooOps) +
                    " ops per graph" + most);
}

}  // namespace

std::vector<std::string> zoo_model_names() {
  // The documented order (papers' models first), not the map's alphabetical one.
  return {"inception_v3", "resnet50", "resnet101", "resnet152", "nasnet",     "nmt2",
          "nmt4",         "nmt8",     "gnmt",      "rnnlm",     "transformer", "gpt"};
}

std::vector<std::string> zoo_language_model_sizes() {
  std::vector<std::string> names;
  for (const datasets_detail::GptSize& size : datasets_detail::gpt_sizes()) names.push_back(size.config.name);
  return names;
}

const std::vector<std::string>& model_option_keys() {
  static const std::vector<std::string> keys = {"batch",      "seq_len", "hidden", "layers",
                                                "vocab",      "image_size", "heads", "kv_heads",
                                                "ffn",        "experts",  "top_k",   "bits"};
  return keys;
}

int* model_option_field(ModelOptions& options, const std::string& key) {
  if (key == "batch") return &options.batch;
  if (key == "seq_len") return &options.seq_len;
  if (key == "hidden") return &options.hidden;
  if (key == "layers") return &options.layers;
  if (key == "vocab") return &options.vocab;
  if (key == "image_size") return &options.image_size;
  if (key == "heads") return &options.heads;
  if (key == "kv_heads") return &options.kv_heads;
  if (key == "ffn") return &options.ffn;
  if (key == "experts") return &options.experts;
  if (key == "top_k") return &options.top_k;
  if (key == "bits") return &options.bits;
  return nullptr;
}

std::vector<std::string> zoo_model_option_keys(const std::string& name) {
  return find_entry(name).keys;
}

OpGraph build_zoo_model(const std::string& name, const ModelOptions& options) {
  const ZooEntry& entry = find_entry(name);
  const std::pair<const char*, int> fields[] = {
      {"batch", options.batch},   {"seq_len", options.seq_len}, {"hidden", options.hidden},
      {"layers", options.layers}, {"vocab", options.vocab},     {"image_size", options.image_size},
      {"heads", options.heads},   {"kv_heads", options.kv_heads}, {"ffn", options.ffn},
      {"experts", options.experts}, {"top_k", options.top_k}, {"bits", options.bits}};
  for (const auto& [field, value] : fields) {
    // 0 means "the model's default"; a negative size is a mistake, not a default.
    if (value < 0) {
      throw ConfigError("zoo model '" + name + "': option '" + field + "' must be positive (or 0 "
                        "for the model's default), got " + std::to_string(value));
    }
  }
  for (const auto& [field, value] : fields) {
    if (value > 1000000) {
      throw ConfigError("zoo model '" + name + "': option '" + field + "' is " +
                        std::to_string(value) + ", above the limit of 1000000");
    }
  }
  check_zoo_size(name, entry, options);
  OpGraph graph = entry.build(options);
  graph.set_name(name);
  graph.set_source("zoo:" + name);
  return graph;
}

}  // namespace aware
