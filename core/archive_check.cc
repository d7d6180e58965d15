#include "core/archive_check.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace aware {

namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralEntry = 0x02014b50;
constexpr std::uint32_t kEndRecord = 0x06054b50;
constexpr std::uint32_t kZip64EndRecord = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint16_t kStored = 0;
constexpr std::uint16_t kDeflated = 8;

// Thrown inside the check, turned into a ParseError naming the file.
struct Corrupt {
  std::string why;
};

// Little-endian reads that refuse to leave the file.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t size() const { return bytes_.size(); }
  bool fits(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size() && length <= size() - offset;
  }
  std::uint64_t le(std::uint64_t offset, int width, const char* what) const {
    if (!fits(offset, width)) {
      throw Corrupt{std::string(what) + " at byte " + std::to_string(offset) +
                    " lies past the end of the file (" + std::to_string(size()) + " bytes)"};
    }
    std::uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i)
      value = (value << 8) | static_cast<unsigned char>(bytes_[offset + i]);
    return value;
  }
  std::uint16_t u16(std::uint64_t at, const char* what) const {
    return static_cast<std::uint16_t>(le(at, 2, what));
  }
  std::uint32_t u32(std::uint64_t at, const char* what) const {
    return static_cast<std::uint32_t>(le(at, 4, what));
  }
  std::uint64_t u64(std::uint64_t at, const char* what) const { return le(at, 8, what); }
  const char* data(std::uint64_t at) const { return bytes_.data() + at; }

 private:
  const std::string& bytes_;
};

// An entry name from the file, made safe to print on one line.
std::string shown_name(const char* data, std::size_t length) {
  std::string out;
  for (std::size_t i = 0; i < length && out.size() < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return length > 60 ? out + "..." : out;
}

std::string hex32(std::uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// Where the central directory is, from the end records.
struct Directory {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
  std::uint64_t end = 0;  // where the records after it begin
};

Directory find_directory(const Reader& r) {
  if (r.size() < 22) {
    throw Corrupt{"too short for a zip archive (" + std::to_string(r.size()) + " bytes)"};
  }
  // The end record is the file's last 22 bytes plus its comment (LibTorch writes
  // none; up to 64 KiB are allowed).
  std::uint64_t end_record = r.size();
  const std::uint64_t lowest = r.size() >= 22 + 65535 ? r.size() - 22 - 65535 : 0;
  for (std::uint64_t at = r.size() - 22 + 1; at-- > lowest;) {
    if (r.u32(at, "end record") == kEndRecord && at + 22 + r.u16(at + 20, "comment") == r.size()) {
      end_record = at;
      break;
    }
  }
  if (end_record == r.size()) {
    throw Corrupt{"no zip end record at the end of the file (truncated, or bytes appended)"};
  }
  Directory dir;
  dir.entries = r.u16(end_record + 10, "entry count");
  const std::uint64_t size = r.u32(end_record + 12, "directory size");
  dir.offset = r.u32(end_record + 16, "directory offset");
  dir.end = end_record;
  if (end_record >= 20 && r.u32(end_record - 20, "zip64 locator") == kZip64Locator) {
    const std::uint64_t record = r.u64(end_record - 20 + 8, "zip64 end record offset");
    // The zip64 end record comes right before its locator (its size field counts
    // the bytes after that field).
    if (record > end_record - 20 || end_record - 20 - record < 56 ||
        r.u32(record, "zip64 end record") != kZip64EndRecord ||
        r.u64(record + 4, "zip64 end record size") != end_record - 20 - record - 12) {
      throw Corrupt{"the zip64 locator points at byte " + std::to_string(record) +
                    ", where no zip64 end record ends at the locator"};
    }
    dir.entries = r.u64(record + 32, "zip64 entry count");
    const std::uint64_t size64 = r.u64(record + 40, "zip64 directory size");
    dir.offset = r.u64(record + 48, "zip64 directory offset");
    dir.end = record;
    if (!r.fits(dir.offset, size64) || dir.offset + size64 != dir.end) {
      throw Corrupt{"the central directory (" + std::to_string(size64) + " bytes at " +
                    std::to_string(dir.offset) +
                    ") does not end where the zip64 end record begins"};
    }
    return dir;
  }
  if (!r.fits(dir.offset, size) || dir.offset + size != dir.end) {
    throw Corrupt{"the central directory (" + std::to_string(size) + " bytes at " +
                  std::to_string(dir.offset) + ") does not end where the end record begins"};
  }
  return dir;
}

// One central-directory entry at `at`: checks it and its data; returns where the
// next entry begins.
std::uint64_t check_entry(const Reader& r, std::uint64_t at, const Directory& dir) {
  if (r.u32(at, "directory entry") != kCentralEntry) {
    throw Corrupt{"no central-directory entry at byte " + std::to_string(at)};
  }
  const std::uint16_t method = r.u16(at + 10, "compression method");
  const std::uint32_t crc = r.u32(at + 16, "CRC-32");
  std::uint64_t packed = r.u32(at + 20, "compressed size");
  std::uint64_t unpacked = r.u32(at + 24, "size");
  const std::uint16_t name_length = r.u16(at + 28, "name length");
  const std::uint16_t extra_length = r.u16(at + 30, "extra length");
  const std::uint16_t comment_length = r.u16(at + 32, "comment length");
  std::uint64_t local = r.u32(at + 42, "local header offset");
  const std::uint64_t name_at = at + 46;
  if (!r.fits(name_at, std::uint64_t{name_length} + extra_length + comment_length)) {
    throw Corrupt{"the directory entry at byte " + std::to_string(at) + " runs past the end"};
  }
  const std::string name = shown_name(r.data(name_at), name_length);
  // Zip64 sizes and offset, in this order, for the fields set to 0xFFFFFFFF.
  for (std::uint64_t x = name_at + name_length; x + 4 <= name_at + name_length + extra_length;) {
    const std::uint16_t id = r.u16(x, "extra field"), length = r.u16(x + 2, "extra field");
    std::uint64_t field = x + 4;
    if (id == 1) {
      for (std::uint64_t* value : {&unpacked, &packed, &local}) {
        if (*value != 0xFFFFFFFFu) continue;
        if (field + 8 > x + 4 + length) throw Corrupt{"entry '" + name + "': a short zip64 field"};
        *value = r.u64(field, "zip64 field");
        field += 8;
      }
    }
    x += 4 + std::uint64_t{length};
  }
  if (r.u32(local, "local header") != kLocalHeader) {
    throw Corrupt{"entry '" + name + "': no local header at byte " + std::to_string(local)};
  }
  const std::uint16_t local_name_length = r.u16(local + 26, "local name length");
  const std::uint16_t local_extra_length = r.u16(local + 28, "local extra length");
  if (local_name_length != name_length || !r.fits(local + 30, name_length) ||
      std::string(r.data(local + 30), name_length) != std::string(r.data(name_at), name_length)) {
    throw Corrupt{"entry '" + name + "': its local header names another entry"};
  }
  const std::uint64_t data = local + 30 + local_name_length + local_extra_length;
  if (data > dir.offset || packed > dir.offset - data) {
    throw Corrupt{"entry '" + name + "': its " + std::to_string(packed) + " bytes at " +
                  std::to_string(data) + " run into the central directory"};
  }
  if (method == kStored) {
    if (packed != unpacked) throw Corrupt{"entry '" + name + "': stored, but its sizes differ"};
    const std::uint32_t computed = zip_crc32(r.data(data), unpacked);
    if (computed != crc) {
      throw Corrupt{"entry '" + name + "' fails its CRC-32 check (recorded " + hex32(crc) +
                    ", computed " + hex32(computed) + ")"};
    }
  } else if (method != kDeflated) {
    throw Corrupt{"entry '" + name + "' uses compression method " + std::to_string(method) +
                  ", which LibTorch does not write"};
  }
  return name_at + name_length + extra_length + comment_length;
}

}  // namespace

std::uint32_t zip_crc32(const void* data, std::size_t size) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

void check_torch_archive(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ParseError(what + " " + path + " is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (!in) throw ParseError(what + " " + path + " cannot be read");
  check_torch_archive_bytes(buffer.str(), path, what);
}

void check_torch_archive_bytes(const std::string& bytes, const std::string& path,
                               const std::string& what) {
  try {
    const Reader r(bytes);
    const Directory dir = find_directory(r);
    std::uint64_t at = dir.offset;
    for (std::uint64_t i = 0; i < dir.entries; ++i) {
      if (at >= dir.end) {
        throw Corrupt{"the central directory ends after " + std::to_string(i) + " of " +
                      std::to_string(dir.entries) + " entries"};
      }
      at = check_entry(r, at, dir);
    }
    if (at != dir.end) {
      throw Corrupt{"the central directory holds more than its " + std::to_string(dir.entries) +
                    " entries"};
    }
    if (dir.entries == 0) throw Corrupt{"the archive is empty"};
  } catch (const Corrupt& c) {
    throw ParseError(what + " " + path + " is corrupt or not a torch archive: " + c.why);
  }
}

}  // namespace aware
