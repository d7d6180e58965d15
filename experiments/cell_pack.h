// A study's finished cells in one file: DIR/cells.pack.json.gz beside DIR/cells/.
//
// A reproduce run writes one file per cell output (KEY.json, KEY.curve.csv,
// KEY.placement.json, ...): hundreds per study, which is a poor thing to keep
// in version control. `aware reproduce --pack` moves the text files of
// DIR/cells/ into DIR/cells.pack.json.gz, a gzip-compressed JSON object
//   {"format": "aware-cells-pack", "version": 1, "files": {"NAME": "TEXT", ...}}
// (learning curves compress four- to sevenfold) and `--unpack` writes them back. Everything that reads a cell (the report,
// --report-only, the resume check) reads through CellFiles, where a loose file
// in DIR/cells/ wins over the pack (a cell run again after packing), so a packed
// study reads exactly as it did unpacked. experiments/cellpack.py reads the same
// format for the table scripts. Binary files (a policy's .pt) are not packed.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace aware::reproduce {

// The files of one cells folder, loose or packed. Reads the pack, if any, once,
// at construction. Not thread-safe.
class CellFiles {
 public:
  // `cell_dir` is DIR/cells; the pack is DIR/cells.pack.json.gz. Throws ParseError
  // naming the pack when it exists but is not one.
  explicit CellFiles(std::filesystem::path cell_dir);
  // True when NAME (e.g. "KEY.json") is a loose file or in the pack.
  bool has(const std::string& name) const;
  // Its text, or nothing when it is neither.
  std::optional<std::string> read(const std::string& name) const;
  // How many files the pack holds (0: none).
  std::size_t packed() const { return packed_.size(); }

 private:
  std::filesystem::path cell_dir_;
  std::map<std::string, std::string> packed_;
};

// DIR/cells.pack.json.gz of `cell_dir` (DIR/cells).
std::filesystem::path pack_path(const std::filesystem::path& cell_dir);

// Moves every text file of `cell_dir` into its pack (merged with a pack that is
// there; a loose file replaces its packed copy), written atomically, then
// removes the loose copies. Leaves binary files and hidden files (a running
// cell's) alone. Returns how many files it moved.
std::size_t pack_cells(const std::filesystem::path& cell_dir);

// Writes every packed file back into `cell_dir` (a loose file is kept as it is)
// and removes the pack. Returns how many files it wrote.
std::size_t unpack_cells(const std::filesystem::path& cell_dir);

}  // namespace aware::reproduce
