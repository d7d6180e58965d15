// The support the trainer and the agents share: the agent registry, the sampling
// helpers, torch archives (policy files; the checkpoint code in trainer.cc uses the
// same helpers) and the learning-curve CSV. Includes LibTorch.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "agents/rl/agent.h"
#include "core/archive_check.h"
#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware::rl {

using nlohmann::json;
namespace fs = std::filesystem;

// ------------------------------------------------------------ registry

AgentRegistry& AgentRegistry::instance() {
  static AgentRegistry registry;
  return registry;
}

AgentFactory placeto_agent_factory() { return make_placeto_agent; }
AgentFactory hierarchical_agent_factory() { return make_hierarchical_agent; }
AgentFactory aware_agent_factory() { return make_aware_agent; }

std::vector<std::string> rl_agent_names() { return AgentRegistry::instance().names(); }
std::string rl_agent_description(const std::string& agent) {
  return AgentRegistry::instance().description(agent);
}
std::vector<RegistryInfo> rl_agent_entries() { return AgentRegistry::instance().entries(); }

void Agent::replay(Episode& episode) {
  (void)episode;
  throw ConfigError("agent '" + kind() + "' does not support algorithm=ppo");
}

// ------------------------------------------------------------ sampling helpers

ImitationTerms Agent::imitation_loss(const Placement&, SampleRng&) {
  throw ConfigError("agent '" + kind() + "' cannot imitate a placement (imitate= is for aware)");
}

std::vector<Episode> Agent::run_episodes(PlacementEnv& env, SampleRng& rng, int count) {
  std::vector<Episode> out;
  for (int e = 0; e < count && !env.exhausted(); ++e) out.push_back(run_episode(env, rng, false));
  return out;
}

namespace {

// [rows x classes]: true at each row's kept action.
torch::Tensor kept_mask(const torch::Tensor& like, const std::vector<int64_t>& kept) {
  AWARE_CHECK(like.size(0) == static_cast<int64_t>(kept.size()), "kept actions must match the rows");
  const torch::Tensor idx = torch::tensor(kept, torch::kInt64).unsqueeze(1);
  return torch::zeros(like.sizes(), torch::kBool).scatter_(1, idx, true);
}

bool keeps(const std::vector<int64_t>& kept, double keep) {
  AWARE_CHECK(keep < 1, "the kept share must be below 1 (every action keeps a probability)");
  return keep > 0 && !kept.empty();
}

}  // namespace

CategoricalTerms categorical_terms(const torch::Tensor& logits, const std::vector<int64_t>& actions,
                                   double explore, const std::vector<int64_t>& kept, double keep) {
  AWARE_CHECK(logits.dim() == 2 && logits.size(0) == static_cast<int64_t>(actions.size()),
              "logits rows must match actions");
  torch::Tensor logp = torch::log_softmax(logits, 1);
  if (explore > 0) {
    // log((1 - e) p + e / D), computed in log space: logaddexp of the two terms.
    const double d = static_cast<double>(logits.size(1));
    logp = torch::logaddexp(logp + std::log1p(-explore), torch::full_like(logp, std::log(explore / d)));
  }
  if (keeps(kept, keep)) {
    // log((1 - k) q + k [a = kept]): the kept entry gains log k, the others none
    // (logaddexp with -inf is the identity, with its gradient).
    const torch::Tensor extra = torch::where(kept_mask(logp, kept), torch::full_like(logp, std::log(keep)),
                                             torch::full_like(logp, -std::numeric_limits<double>::infinity()));
    logp = torch::logaddexp(logp + std::log1p(-keep), extra);
  }
  const torch::Tensor idx = torch::tensor(actions, torch::kInt64).unsqueeze(1);
  CategoricalTerms out;
  out.log_probs = logp.gather(1, idx).squeeze(1);
  out.log_prob = out.log_probs.sum();
  // The sampling distribution's entropy, as with the floor. Around an incumbent
  // it is small by construction, and its gradient moves the policy's mass off
  // the incumbent's device: a push towards proposing moves.
  out.entropy = -(logp.exp() * logp).sum();
  return out;
}

std::vector<int64_t> sample_rows(const torch::Tensor& logits, SampleRng& rng, bool greedy, double explore,
                                 const std::vector<int64_t>& kept, double keep) {
  torch::Tensor probs = torch::softmax(logits.detach(), 1);
  if (explore > 0 && !greedy) probs = probs * (1 - explore) + explore / static_cast<double>(logits.size(1));
  if (!greedy && keeps(kept, keep)) probs = probs * (1 - keep) + kept_mask(probs, kept).to(probs.dtype()) * keep;
  probs = probs.contiguous().to(torch::kFloat);
  const int64_t rows = probs.size(0);
  const int cols = static_cast<int>(probs.size(1));
  const float* p = probs.data_ptr<float>();
  std::vector<int64_t> out(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = p + r * cols;
    out[r] = greedy ? std::max_element(row, row + cols) - row : rng.categorical(row, cols);
  }
  return out;
}

// ------------------------------------------------------------ archives (shared with checkpoints)

std::string ivalue_string(torch::serialize::InputArchive& archive, const std::string& key,
                          const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(key, value) || !value.isString())
    throw ParseError(path + ": not an aware policy/checkpoint (no '" + key + "' entry)");
  return value.toStringRef();
}

void load_archive(torch::serialize::InputArchive& archive, const std::string& path,
                  const std::string& what) {
  if (!fs::exists(path)) throw ParseError(what + " " + path + " does not exist");
  // LibTorch does not check the entries' CRC-32s: a damaged weight would load.
  check_torch_archive(path, what);
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    msg = msg.substr(0, msg.find('\n'));
    throw ParseError(what + " " + path + " is corrupt or not a torch archive: " + msg);
  }
}

void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes,
                        const std::string& path, const std::string& what) {
  check_torch_archive_bytes(bytes, path, what);
  try {
    archive.load_from(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    std::string msg = e.what();
    msg = msg.substr(0, msg.find('\n'));
    throw ParseError(what + " " + path + " is corrupt or not a torch archive: " + msg);
  }
}

json parse_header(const std::string& text, const std::string& path) {
  json header;
  try {
    header = json::parse(text);
  } catch (const std::exception& e) {
    throw ParseError(path + ": header is not JSON: " + e.what());
  }
  if (!header.is_object()) throw ParseError(path + ": header is not a JSON object");
  return header;
}

void check_header_fields(const json& header, const std::string& path,
                         std::initializer_list<std::pair<const char*, HeaderField>> fields) {
  for (const auto& [key, type] : fields) {
    const auto it = header.find(key);
    if (it == header.end()) continue;
    bool ok = false;
    const char* expected = "";
    switch (type) {
      case HeaderField::kString:
        ok = it->is_string();
        expected = "a string";
        break;
      case HeaderField::kInteger:
        ok = it->is_number_integer();
        expected = "an integer";
        break;
      case HeaderField::kObject:
        ok = it->is_object();
        expected = "an object";
        break;
    }
    if (ok) continue;
    std::string shown = it->dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    throw ParseError(path + ": field '" + key + "' of its header must be " + expected + ", got " +
                     shown);
  }
}

// Saves an archive through a temporary file and a rename.
void save_archive_atomic(torch::serialize::OutputArchive& archive, const std::string& path) {
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  try {
    archive.save_to(tmp);
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    // LibTorch's messages carry a stack trace after the first line.
    const std::string what = e.what();
    throw Error("cannot write " + path + ": " + what.substr(0, what.find('\n')));
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) throw Error("cannot write " + path + ": " + ec.message());
}

// ------------------------------------------------------------ policy files

json policy_header(int devices, const json& feature_dims, const json& config) {
  json h;
  h["devices"] = devices;
  h["feature_dims"] = feature_dims;
  h["config"] = config;
  return h;
}


namespace {

void check_compatible(const json& header, const Agent& agent, const std::string& path) {
  const json mine = agent.header();
  const std::string kind = header.value("agent", "");
  if (kind != agent.kind())
    throw ConfigError(path + " holds a policy of agent '" + kind + "', not '" + agent.kind() + "'");
  const int devices = header.value("devices", -1);
  if (devices != mine.value("devices", -2))
    throw ConfigError(path + " holds a policy for " + std::to_string(devices) +
                      " devices; this cluster has " + std::to_string(mine.value("devices", -2)));
  if (header.value("feature_dims", json()) != mine.value("feature_dims", json()))
    throw ConfigError(path + " holds a policy with feature dims " +
                      header.value("feature_dims", json()).dump() + "; this agent uses " +
                      mine.value("feature_dims", json()).dump());
  if (header.value("config", json::object()) != mine.value("config", json::object()))
    throw ConfigError(path + " holds a policy with network settings " +
                      header.value("config", json::object()).dump() + "; this agent has " +
                      mine.value("config", json::object()).dump());
}

}  // namespace

// The fields of a policy header this build reads, with their types.
void check_policy_header(const json& header, const std::string& path) {
  using F = HeaderField;
  check_header_fields(header, path,
                      {{"format", F::kString},
                       {"version", F::kInteger},
                       {"agent", F::kString},
                       {"devices", F::kInteger},
                       {"config", F::kObject}});
}

json read_policy_header(const std::string& path) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, "policy");
  const json header = parse_header(ivalue_string(archive, "header", path), path);
  check_policy_header(header, path);
  if (header.value("format", "") != "aware-rl-policy")
    throw ParseError(path + " is not an aware policy file (format '" + header.value("format", "") + "')");
  if (header.value("version", 0) != kPolicyFormatVersion)
    throw ParseError(path + ": policy format version " + std::to_string(header.value("version", 0)) +
                     " is not supported (this build reads " + std::to_string(kPolicyFormatVersion) + ")");
  return header;
}

PolicyInfo read_policy_info(const std::string& path) {
  const json h = read_policy_header(path);
  return {h.value("agent", ""), h.value("devices", 0), h.value("version", 0), h.dump()};
}

void save_policy(const Agent& agent, torch::nn::Module& module, const std::string& path) {
  json header = agent.header();
  header["format"] = "aware-rl-policy";
  header["version"] = kPolicyFormatVersion;
  header["agent"] = agent.kind();
  torch::serialize::OutputArchive archive;
  archive.write("header", c10::IValue(header.dump()));
  torch::serialize::OutputArchive weights;
  module.save(weights);
  archive.write("model", weights);
  save_archive_atomic(archive, path);
}

void load_policy(Agent& agent, const std::string& path) {
  torch::serialize::InputArchive archive;
  load_archive(archive, path, "policy");
  const json header = parse_header(ivalue_string(archive, "header", path), path);
  check_policy_header(header, path);
  if (header.value("format", "") != "aware-rl-policy")
    throw ParseError(path + " is not an aware policy file");
  check_compatible(header, agent, path);
  try {
    torch::serialize::InputArchive weights;
    archive.read("model", weights);
    agent.module().load(weights);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw ParseError(path + ": cannot load the weights: " + msg.substr(0, msg.find('\n')));
  }
}

Options merge_policy_config(const json& header, const Options& user, const std::string& path) {
  Options out = user;
  const json config = header.value("config", json::object());
  for (const auto& [key, value] : config.items()) {
    const std::string v = value.is_string() ? value.get<std::string>() : value.dump();
    const auto it = user.find(key);
    if (it != user.end() && it->second != v)
      throw ConfigError("option " + key + "=" + it->second + " disagrees with policy " + path +
                        " (trained with " + key + "=" + v + ")");
    out[key] = v;
  }
  return out;
}

void write_curve_csv(const std::vector<CurvePoint>& curve, const std::string& path) {
  const bool tagged =
      std::any_of(curve.begin(), curve.end(), [](const CurvePoint& p) { return !p.graph.empty(); });
  std::ostringstream out;
  out << "evaluations,seconds,mean_step_us,best_step_us,entropy,loss,min_step_us,max_step_us"
      << (tagged ? ",graph" : "") << "\n";
  out.precision(10);
  for (const auto& p : curve) {
    out << p.evaluations << "," << p.seconds << "," << p.mean_step_us << "," << p.best_step_us
        << "," << p.entropy << "," << p.loss << "," << p.min_step_us << "," << p.max_step_us;
    if (tagged) out << "," << p.graph;
    out << "\n";
  }
  write_text_file_atomic(path, out.str());
}

}  // namespace aware::rl
