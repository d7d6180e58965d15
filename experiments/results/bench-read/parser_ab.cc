#include <nlohmann/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
using nlohmann::json;
struct ParseError : std::runtime_error { using std::runtime_error::runtime_error; };
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


struct JsonFrame { bool array=false; std::set<std::string> keys; std::string key; long index=-1; };
json old_parse(const std::string& text) {
  std::vector<JsonFrame> frames;
  const json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if ((event == E::object_start || event == E::array_start || event == E::value) && !frames.empty() && frames.back().array) ++frames.back().index;
    switch (event) {
      case E::object_start: frames.push_back(JsonFrame{}); break;
      case E::array_start: frames.emplace_back().array = true; break;
      case E::object_end: case E::array_end: if (!frames.empty()) frames.pop_back(); break;
      case E::key: { JsonFrame& f = frames.back(); f.key = parsed.get<std::string>(); if (!f.keys.insert(f.key).second) throw ParseError("dup"); break; }
      case E::value: break;
    }
    return true;
  };
  return json::parse(text, cb);
}
}
int main(int argc, char** argv) {
  std::ifstream in(argv[1]); std::stringstream ss; ss << in.rdbuf(); const std::string text = ss.str();
  const bool use_old = std::string(argv[2]) == "old";
  const auto t0 = std::chrono::steady_clock::now();
  json doc;
  if (use_old) doc = old_parse(text); else { const std::string source = "x"; StrictDomBuilder b(source); json::sax_parse(text, &b); doc = b.take(); }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %s: %.3f s (%zu ops)\n", argv[1], argv[2], s, doc["ops"].size());
}
