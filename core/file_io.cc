// The file and JSON-text half of core/formats.h: reading and atomically writing
// files, preparing output paths, and parsing JSON with errors that name the file
// and the position. The format converters (graph, cluster, placement) are
// formats.cc.
#include "core/formats.h"

#include <cstdio>
#include <filesystem>
#include <set>
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

void prepare_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (fs::is_directory(target, ec))
    throw ConfigError(flag + " " + path + ": is a directory, not a file");
  const fs::path parent = target.parent_path();
  if (!parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) throw ConfigError(flag + " " + path + ": cannot create folder '" + parent.string() + "' (" + ec.message() + ")");
  }
  // Probe with a file of our own, so that an existing output is left as it is.
  const std::string probe = path + ".probe." + std::to_string(::getpid());
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(flag + " " + path + ": cannot write there");
  }
  std::remove(probe.c_str());
}

namespace {

// Where the parser is, for the message about a repeated key: one frame per open
// object or array.
struct JsonFrame {
  bool array = false;
  std::set<std::string> keys;  // an object's keys so far
  std::string key;             // an object's current key
  long index = -1;             // an array's current element
};

// A name cut short so that an error stays one line.
std::string shown_key(const std::string& key) {
  return key.size() > 40 ? key.substr(0, 37) + "..." : key;
}

// "costs.V100", "ops[3]": where the innermost frame sits.
std::string json_location(const std::vector<JsonFrame>& frames) {
  std::string where;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    if (frames[i].array) {
      where.append("[").append(std::to_string(frames[i].index)).append("]");
    } else {
      if (!where.empty()) where.push_back('.');
      where.append(shown_key(frames[i].key));
    }
  }
  return where;
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& source) {
  // JSON lets an object repeat a key and the parser keeps the last value; in our
  // formats that would drop a cost or a field silently, so a repeat is refused.
  std::vector<JsonFrame> frames;
  const json::parser_callback_t refuse_repeated_keys = [&](int, json::parse_event_t event,
                                                           json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start || event == E::value) &&
        !frames.empty() && frames.back().array) {
      ++frames.back().index;
    }
    switch (event) {
      case E::object_start:
        frames.push_back(JsonFrame{});
        break;
      case E::array_start:
        frames.emplace_back().array = true;
        break;
      case E::object_end:
      case E::array_end:
        if (!frames.empty()) frames.pop_back();
        break;
      case E::key: {
        JsonFrame& frame = frames.back();
        frame.key = parsed.get<std::string>();
        if (!frame.keys.insert(frame.key).second) {
          const std::string where = json_location(frames);
          throw ParseError(source + ": field '" + shown_key(frame.key) + "' appears twice " +
                           (where.empty() ? "at the top level" : "in " + where) +
                           " (a repeated key would silently replace the first value)");
        }
        break;
      }
      case E::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, refuse_repeated_keys);
  } catch (const json::parse_error& e) {
    throw ParseError(source + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    // e.g. a number too large for a double: "number overflow parsing '1e999'"
    std::string what = e.what();
    const auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    throw ParseError(source + ": not valid JSON (" + what + ")");
  }
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  write_text_file_atomic(path, doc.dump(1) + "\n");
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

}  // namespace aware
