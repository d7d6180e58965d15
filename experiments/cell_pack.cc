#include "experiments/cell_pack.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <zlib.h>


#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"

namespace aware::reproduce {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "aware-cells-pack";

// The pack's JSON text, decompressed; ParseError naming the file when it is not gzip.
std::string read_gzip(const fs::path& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) throw ParseError(path.string() + ": cannot be read");
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  int code = Z_OK;
  const char* message = gzerror(in, &code);
  const std::string why = code == Z_OK || code == Z_STREAM_END ? "" : message;
  gzclose(in);
  if (n < 0 || !why.empty()) throw ParseError(path.string() + ": not a gzip-compressed cells pack (" + why + ")");
  return text;
}

// `text` gzip-compressed into `path` through a temporary file and a rename.
void write_gzip_atomic(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  gzFile out = gzopen(tmp.c_str(), "wb9");
  if (out == nullptr) throw Error(path.string() + ": cannot be written");
  size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(text.size() - done, 1u << 20));
    ok = gzwrite(out, text.data() + done, chunk) == static_cast<int>(chunk);
    done += chunk;
  }
  ok = gzclose(out) == Z_OK && ok;
  if (!ok) {
    fs::remove(tmp);
    throw Error(path.string() + ": cannot be written");
  }
  fs::rename(tmp, path);
}

std::map<std::string, std::string> read_pack(const fs::path& pack) {
  std::map<std::string, std::string> files;
  if (!fs::exists(pack)) return files;
  const nlohmann::json doc = parse_json_text(read_gzip(pack), pack.string());
  if (!doc.is_object() || doc.value("format", "") != kFormat || !doc.contains("files") || !doc["files"].is_object())
    throw ParseError(pack.string() + ": not a cells pack (field 'format' must be \"" + kFormat +
                     "\" and 'files' an object)");
  for (const auto& [name, text] : doc["files"].items()) {
    if (!text.is_string()) throw ParseError(pack.string() + ": file '" + name + "' is not text");
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
      throw ParseError(pack.string() + ": file name '" + name + "' is not a plain name");
    files[name] = text.get<std::string>();
  }
  return files;
}

// Text as the cells write it: UTF-8 without NUL bytes (a policy's .pt is binary).
bool is_text(const std::string& bytes) {
  if (bytes.find('\0') != std::string::npos) return false;
  try {
    (void)nlohmann::json(bytes).dump();  // throws on invalid UTF-8
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace

fs::path pack_path(const fs::path& cell_dir) { return cell_dir.parent_path() / "cells.pack.json.gz"; }

CellFiles::CellFiles(fs::path cell_dir) : cell_dir_(std::move(cell_dir)), packed_(read_pack(pack_path(cell_dir_))) {}

bool CellFiles::has(const std::string& name) const {
  return fs::exists(cell_dir_ / name) || packed_.count(name) > 0;
}

std::optional<std::string> CellFiles::read(const std::string& name) const {
  const fs::path loose = cell_dir_ / name;
  if (fs::exists(loose)) return read_text_file(loose.string());
  const auto it = packed_.find(name);
  if (it != packed_.end()) return it->second;
  return std::nullopt;
}

std::size_t pack_cells(const fs::path& cell_dir) {
  std::map<std::string, std::string> files = read_pack(pack_path(cell_dir));
  std::vector<fs::path> moved;
  if (fs::is_directory(cell_dir)) {
    for (const auto& entry : fs::directory_iterator(cell_dir)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || name.empty() || name[0] == '.') continue;
      std::string text = read_text_file(entry.path().string());
      if (!is_text(text)) continue;
      files[name] = std::move(text);
      moved.push_back(entry.path());
    }
  }
  nlohmann::json doc = {{"format", kFormat}, {"version", 1}, {"files", nlohmann::json::object()}};
  for (auto& [name, text] : files) doc["files"][name] = std::move(text);
  write_gzip_atomic(pack_path(cell_dir), doc.dump(0) + "\n");
  for (const fs::path& p : moved) fs::remove(p);
  return moved.size();
}

std::size_t unpack_cells(const fs::path& cell_dir) {
  const fs::path pack = pack_path(cell_dir);
  const std::map<std::string, std::string> files = read_pack(pack);
  fs::create_directories(cell_dir);
  std::size_t written = 0;
  for (const auto& [name, text] : files) {
    if (fs::exists(cell_dir / name)) continue;
    write_text_file_atomic((cell_dir / name).string(), text);
    ++written;
  }
  fs::remove(pack);
  return written;
}

}  // namespace aware::reproduce
