// Versioned JSON formats for graphs, clusters and placements. See docs/formats.md.
// (DOT and Chrome-trace exports are in core/exporters.h.)
//
// Readers throw ParseError with the file, the op / device and the field; writers
// write to a temporary file and rename it, so a failed write leaves nothing behind.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

constexpr int kGraphFormatVersion = 1;
constexpr int kClusterFormatVersion = 1;
constexpr int kPlacementFormatVersion = 1;

nlohmann::json graph_to_json(const OpGraph& graph);
// `source` names the document in error messages. Validates the graph.
OpGraph graph_from_json(const nlohmann::json& doc, const std::string& source);
OpGraph read_graph_file(const std::string& path);
void write_graph_file(const OpGraph& graph, const std::string& path);

nlohmann::json cluster_to_json(const Cluster& cluster);
Cluster cluster_from_json(const nlohmann::json& doc, const std::string& source);
Cluster read_cluster_file(const std::string& path);
void write_cluster_file(const Cluster& cluster, const std::string& path);

// Placements are stored by op name and device name, so they survive re-numbering.
nlohmann::json placement_to_json(const OpGraph& graph, const Cluster& cluster,
                                 const Placement& placement);
Placement placement_from_json(const nlohmann::json& doc, const OpGraph& graph,
                              const Cluster& cluster, const std::string& source);
Placement read_placement_file(const std::string& path, const OpGraph& graph,
                              const Cluster& cluster);
void write_placement_file(const OpGraph& graph, const Cluster& cluster,
                          const Placement& placement, const std::string& path);

// Reads a whole file; throws ParseError naming the path when it cannot.
std::string read_text_file(const std::string& path);
// Writes `text` to `path` through a temporary file and a rename.
void write_text_file_atomic(const std::string& path, const std::string& text);
// `doc` as indented JSON through write_text_file_atomic.
void write_json_file(const std::string& path, const nlohmann::json& doc);
// The JSON document in `path`; ParseError naming the file and the position.
nlohmann::json read_json_file(const std::string& path);
// Writes every (path, text) to its temporary file first, then renames them all:
// a failed write (disk full, no permission) leaves none of them behind. An empty
// path is refused with ConfigError before anything is written.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);
// Before long work: creates `path`'s missing parent folders and checks that a file
// can be written there. Throws ConfigError naming `flag` and `path`. Does nothing
// for an empty path.
void prepare_output_path(const std::string& path, const std::string& flag);
// prepare_output_path for an output the command always writes: an empty `path`
// (-o "") is refused with ConfigError "FLAG is empty" instead of being skipped.
void prepare_required_output_path(const std::string& path, const std::string& flag);
// One command's files, as (option, path) pairs: `outputs` it will write and
// `inputs` it reads (specs that are not files, such as zoo:resnet50, and empty
// paths are skipped). Throws ConfigError when an output is the same file as an
// input ("-o same.json is the --graph input: writing it would replace it") or
// as another output, before any work.
void check_distinct_files(const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::vector<std::pair<std::string, std::string>>& inputs);
// Creates output folder `folder` (and its missing parents) for option `flag`
// given `path`; returns whether it created anything (so that a failed run can
// remove what it made). Refuses, with ConfigError, a folder whose nearest
// existing ancestor is the file system's root (-o /nonexistent/dir), and a name
// that exists as a file.
bool create_output_folder(const std::string& folder, const std::string& flag, const std::string& path);
// Parses JSON text, throwing ParseError with the path and the position. An object
// that repeats a key is refused too (ParseError naming the key and where it is),
// since keeping only the last value would drop the first silently.
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

}  // namespace aware
