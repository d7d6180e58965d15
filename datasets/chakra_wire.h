// Internal to datasets/chakra_write.cc and chakra_read.cc: Chakra's framing (a
// base-128 varint of each message's size, then the message) and the attribute
// helpers both sides use, over the schema's generated code.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "et_def.pb.h"

namespace aware::chakra_detail {

namespace pb = ChakraProtoMsg;

// What our own exports say in GlobalMetadata's "schema" attribute.
inline constexpr const char* kSchema = "aware-workbench/chakra-export-1";
inline constexpr const char* kVersion = "0.0.4";  // the version ASTRA-sim's example traces carry

// ---- framing: a base-128 varint of the size, then the message -------------------

inline void append_message(std::string& out, const google::protobuf::MessageLite& message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  std::uint64_t size = bytes.size();
  do {
    std::uint8_t byte = size & 0x7f;
    size >>= 7;
    if (size != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (size != 0);
  out += bytes;
}

class FrameReader {
 public:
  FrameReader(const std::string& data, const std::string& file) : data_(data), file_(file) {}
  bool done() const { return pos_ >= data_.size(); }
  std::size_t position() const { return pos_; }
  // The next message's bytes; ParseError when the file ends inside its prefix or body.
  std::string next(const std::string& what) {
    const std::size_t at = pos_;
    std::uint64_t size = 0;
    int shift = 0;
    for (;;) {
      if (pos_ >= data_.size())
        throw ParseError(file_ + ": truncated: the length of " + what + " at byte " + std::to_string(at) +
                         " runs past the end of the file");
      const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
      size |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
      shift += 7;
      if (shift > 28)
        throw ParseError(file_ + ": the length of " + what + " at byte " + std::to_string(at) +
                         " is not a 32-bit varint: not a Chakra execution trace");
    }
    const std::size_t left = data_.size() - pos_;
    if (size > left)
      throw ParseError(file_ + ": truncated: " + what + " at byte " + std::to_string(at) + " declares " +
                       std::to_string(size) + " bytes, the file has " + std::to_string(left) + " left");
    std::string out = data_.substr(pos_, size);
    pos_ += size;
    return out;
  }

 private:
  const std::string& data_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

// ---- attributes ---------------------------------------------------------------------

inline pb::AttributeProto* add_attr(google::protobuf::RepeatedPtrField<pb::AttributeProto>* attrs, const std::string& name) {
  pb::AttributeProto* a = attrs->Add();
  a->set_name(name);
  return a;
}

template <class Msg>
inline void attr_bool(Msg& m, const std::string& name, bool v) { add_attr(m.mutable_attr(), name)->set_bool_val(v); }
template <class Msg>
inline void attr_int64(Msg& m, const std::string& name, std::int64_t v) { add_attr(m.mutable_attr(), name)->set_int64_val(v); }
template <class Msg>
inline void attr_uint64(Msg& m, const std::string& name, std::uint64_t v) { add_attr(m.mutable_attr(), name)->set_uint64_val(v); }
template <class Msg>
inline void attr_int32(Msg& m, const std::string& name, std::int32_t v) { add_attr(m.mutable_attr(), name)->set_int32_val(v); }
template <class Msg>
inline void attr_double(Msg& m, const std::string& name, double v) { add_attr(m.mutable_attr(), name)->set_double_val(v); }
template <class Msg>
inline void attr_string(Msg& m, const std::string& name, const std::string& v) {
  add_attr(m.mutable_attr(), name)->set_string_val(v);
}
template <class Msg>
inline void attr_doubles(Msg& m, const std::string& name, const std::vector<double>& v) {
  auto* list = add_attr(m.mutable_attr(), name)->mutable_double_list();
  for (double x : v) list->add_values(x);
}
template <class Msg>
inline void attr_int64s(Msg& m, const std::string& name, const std::vector<std::int64_t>& v) {
  auto* list = add_attr(m.mutable_attr(), name)->mutable_int64_list();
  for (std::int64_t x : v) list->add_values(x);
}

template <class Msg>
const pb::AttributeProto* find_attr(const Msg& m, const std::string& name) {
  for (const pb::AttributeProto& a : m.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// A number from any scalar member (Chakra's writers disagree on the integer type).
inline bool attr_number(const pb::AttributeProto* a, double* out) {
  if (a == nullptr) return false;
  using A = pb::AttributeProto;
  switch (a->value_case()) {
    case A::kDoubleVal: *out = a->double_val(); return true;
    case A::kFloatVal: *out = a->float_val(); return true;
    case A::kInt32Val: *out = a->int32_val(); return true;
    case A::kInt64Val: *out = static_cast<double>(a->int64_val()); return true;
    case A::kUint32Val: *out = a->uint32_val(); return true;
    case A::kUint64Val: *out = static_cast<double>(a->uint64_val()); return true;
    case A::kSint32Val: *out = a->sint32_val(); return true;
    case A::kSint64Val: *out = static_cast<double>(a->sint64_val()); return true;
    case A::kFixed32Val: *out = a->fixed32_val(); return true;
    case A::kFixed64Val: *out = static_cast<double>(a->fixed64_val()); return true;
    case A::kSfixed32Val: *out = a->sfixed32_val(); return true;
    case A::kSfixed64Val: *out = static_cast<double>(a->sfixed64_val()); return true;
    case A::kBoolVal: *out = a->bool_val() ? 1 : 0; return true;
    default: return false;
  }
}

template <class Msg>
double number_or(const Msg& m, const std::string& name, double fallback) {
  double v = 0;
  return attr_number(find_attr(m, name), &v) ? v : fallback;
}

template <class Msg>
inline std::string string_or(const Msg& m, const std::string& name, const std::string& fallback) {
  const pb::AttributeProto* a = find_attr(m, name);
  return a != nullptr && a->value_case() == pb::AttributeProto::kStringVal ? a->string_val() : fallback;
}

inline std::vector<double> doubles_of(const pb::Node& n, const std::string& name) {
  std::vector<double> out;
  const pb::AttributeProto* a = find_attr(n, name);
  if (a == nullptr) return out;
  if (a->value_case() == pb::AttributeProto::kDoubleList)
    for (double v : a->double_list().values()) out.push_back(v);
  if (a->value_case() == pb::AttributeProto::kInt64List)
    for (auto v : a->int64_list().values()) out.push_back(static_cast<double>(v));
  if (a->value_case() == pb::AttributeProto::kUint64List)
    for (auto v : a->uint64_list().values()) out.push_back(static_cast<double>(v));
  return out;
}

inline std::uint64_t whole_us(double us) { return us > 0 ? static_cast<std::uint64_t>(std::llround(us)) : 0; }

}  // namespace aware::chakra_detail
