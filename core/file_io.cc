// The file and JSON-text half of core/formats.h: reading and atomically writing
// files, preparing output paths, and parsing JSON with errors that name the file
// and the position. The format converters (graph, cluster, placement) are
// formats.cc.
#include "core/formats.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace aware {

using nlohmann::json;

// ---------------------------------------------------------------- files

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ParseError(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path + ": cannot open file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ParseError(path + ": read error");
  return buffer.str();
}

namespace {
// Writes `text` to a temporary file beside `path`; returns its name.
std::string write_temporary(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw ParseError(path + ": cannot open file for writing");
  out << text;
  out.flush();
  if (!out) {
    out.close();
    std::remove(tmp.c_str());
    throw ParseError(path + ": write failed (disk full?)");
  }
  return tmp;
}
}  // namespace

void write_text_file_atomic(const std::string& path, const std::string& text) {
  write_files_atomic({{path, text}});
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  // An empty name would become the temporary ".tmp.PID" in the working folder and
  // then fail to rename ("error: : cannot rename ..."): say what is wrong instead.
  for (const auto& file : files) {
    if (file.first.empty()) throw ConfigError("the output file name is empty");
  }
  std::vector<std::string> temporaries;
  try {
    for (const auto& [path, text] : files) temporaries.push_back(write_temporary(path, text));
  } catch (...) {
    for (const std::string& tmp : temporaries) std::remove(tmp.c_str());
    throw;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temporaries[i].c_str(), files[i].first.c_str()) != 0) {
      for (size_t j = i; j < files.size(); ++j) std::remove(temporaries[j].c_str());
      throw ParseError(files[i].first + ": cannot rename the temporary file into place");
    }
  }
}

namespace {

// Two paths name one file: the same existing file (links, ./, ../ resolved), or
// the same path once made absolute and normal (for a file not there yet).
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path na = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path nb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !na.empty() && na == nb;
}

}  // namespace

void check_distinct_files(const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty()) continue;
    for (const auto& [in_flag, in_path] : inputs) {
      std::error_code ec;
      if (in_path.empty() || !std::filesystem::is_regular_file(in_path, ec)) continue;
      if (same_file(path, in_path))
        throw ConfigError(flag + " " + path + " is the " + in_flag + " input: writing it would replace it");
    }
    for (size_t j = 0; j < i; ++j) {
      if (!outputs[j].second.empty() && same_file(path, outputs[j].second))
        throw ConfigError(flag + " " + path + " and " + outputs[j].first + " " + outputs[j].second +
                          " are one file: give each output its own");
    }
  }
}

bool create_output_folder(const std::string& folder, const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(folder);
  if (dir.empty() || fs::is_directory(dir, ec)) return false;
  if (fs::exists(dir, ec))
    throw ConfigError(flag + " " + path + ": '" + folder + "' exists and is not a folder");
  // The nearest folder that exists: creating below it is what a user means by a
  // new output folder; creating a top-level folder (/nonexistent) never is.
  fs::path existing = fs::absolute(dir, ec).parent_path();
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.root_path())
    existing = existing.parent_path();
  if (existing == existing.root_path())
    throw ConfigError(flag + " " + path + ": no such folder '" + folder +
                      "' (a new output folder is created only inside one that exists, not at the top of the file system)");
  if (!fs::is_directory(existing, ec))
    throw ConfigError(flag + " " + path + ": '" + existing.string() + "' is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw ConfigError(flag + " " + path + ": cannot create folder '" + folder + "' (" + ec.message() + ")");
  return true;
}

void prepare_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (fs::is_directory(target, ec))
    throw ConfigError(flag + " " + path + ": is a directory, not a file");
  create_output_folder(target.parent_path().string(), flag, path);
  // Probe with a file of our own, so that an existing output is left as it is.
  const std::string probe = path + ".probe." + std::to_string(::getpid());
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(flag + " " + path + ": cannot write there");
  }
  std::remove(probe.c_str());
}

void prepare_required_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) throw ConfigError(flag + " is empty");
  prepare_output_path(path, flag);
}

namespace {

// A name cut short so that an error stays one line.
std::string shown_key(const std::string& key) {
  return key.size() > 40 ? key.substr(0, 37) + "..." : key;
}

// Builds the document from the parser's events, refusing a key repeated within
// one object. JSON lets an object repeat a key and keeps the last value; in our
// formats that would drop a cost or a field silently.
//
// Its own handler rather than nlohmann's callback parser: that parser's
// end_object scans the enclosing array for discarded values on every object it
// closes, so an array of n objects (a graph's ops) took O(n^2) time. Here each
// event costs O(log k) in the k keys of the open object, and a repeated key is
// found by looking in the object being built, so no key set is kept aside.
class StrictDomBuilder {
 public:
  explicit StrictDomBuilder(const std::string& source) : source_(source) {}

  json take() { return std::move(root_); }

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(json::number_integer_t value) { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return add(json(value)); }
  bool string(json::string_t& value) { return add(json(std::move(value))); }
  bool binary(json::binary_t& value) { return add(json(json::binary_t(std::move(value)))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    Frame& frame = frames_.back();
    if (frame.value->contains(name)) {
      const std::string where = location();
      throw ParseError(source_ + ": field '" + shown_key(name) + "' appears twice " +
                       (where.empty() ? "at the top level" : "in " + where) +
                       " (a repeated key would silently replace the first value)");
    }
    frame.key = std::move(name);
    return true;
  }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    if (e.id >= 100 && e.id < 200)
      throw ParseError(source_ + ": not valid JSON (byte " + std::to_string(byte) + ")");
    // e.g. a number too large for a double: "number overflow parsing '1e999'"
    std::string what = e.what();
    const auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw ParseError(source_ + ": not valid JSON (" + what + ")");
  }

 private:
  // One per open object or array: where its next value goes.
  struct Frame {
    json* value = nullptr;
    std::string key;  // an object's current key
  };

  // Puts `value` where the innermost open container expects it; returns where it went.
  json* place(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& frame = frames_.back();
    if (frame.value->is_array()) {
      frame.value->push_back(std::move(value));
      return &frame.value->back();
    }
    json& slot = (*frame.value)[frame.key];
    slot = std::move(value);
    return &slot;
  }

  bool add(json&& value) {
    place(std::move(value));
    return true;
  }

  // A container's address stays valid while it is open: its parent only grows
  // when a sibling is added, and siblings come after it closes. (An array's
  // elements may move when the array grows, but the open one is its last and
  // the array does not grow until it closes.)
  bool open(json&& container) {
    json* where = place(std::move(container));
    frames_.push_back(Frame{where, {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // "costs.V100", "ops[3]": where the innermost open object sits.
  std::string location() const {
    std::string where;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      if (frame.value->is_array()) {
        where.append("[").append(std::to_string(frame.value->size() - 1)).append("]");
      } else {
        if (!where.empty()) where.push_back('.');
        where.append(shown_key(frame.key));
      }
    }
    return where;
  }

  const std::string& source_;
  json root_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& source) {
  StrictDomBuilder builder(source);
  json::sax_parse(text, &builder);
  return builder.take();
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  write_text_file_atomic(path, doc.dump(1) + "\n");
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

}  // namespace aware
