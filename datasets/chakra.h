// MLCommons Chakra execution traces in and out (the format ASTRA-sim reads and
// PyTorch's tools produce). Protobuf-free header: the schema (chakra/et_def.proto,
// from Chakra's published specification) and its generated code stay in chakra_write.cc,
// chakra_read.cc and chakra_wire.h (target aware_chakra, built when protobuf's compiler and library are found).
//
// A file holds one rank: a length-prefixed GlobalMetadata, then length-prefixed
// Nodes until the end (the prefix is protobuf's base-128 varint of the message's
// size; there is no magic number). docs/formats.md#chakra-execution-traces says
// what each node and attribute written here means.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

struct ChakraExport {
  std::vector<std::string> files;  // one per device, rank order
  int nodes = 0;                   // over every file
  int comm_pairs = 0;              // send/receive pairs (one per producer output and receiving device)
  int collectives = 0;             // COMM_COLL_NODEs written (over every file)
};

// Writes DIR/PREFIX.R.et for every device R of `cluster`, all or none (temporary
// files renamed at the end): a compute node per op (durations from `trace`), a
// send node on the producer's rank and a receive node on the consumer's for every
// producer output a device receives (timed by the trace's transfer), data
// dependencies within a rank, and the global metadata (graph, cluster, rank,
// evaluator, step). `trace` must cover every op (an evaluator's trace of this
// placement). Throws ConfigError for a trace that does not fit the graph.
//
// With `collectives_as_nodes`, each collective a strategy inserted (the ops of one
// bucket's ring, tree, parameter-server or reducer exchange: communication-stream
// ops of the strategy block named ".../b<K>/...") becomes one COMM_COLL_NODE per
// device it touches (ALL_REDUCE, comm_size = the bucket's bytes, timed from its
// first op's start to its last op's end there), as ASTRA-sim expects collectives;
// without, its point-to-point steps are written as they are (an exact round trip).
ChakraExport write_chakra_traces(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                                 const Trace& trace, double step_us, const std::string& evaluator,
                                 const std::string& dir, const std::string& prefix,
                                 bool collectives_as_nodes = false);

struct ChakraImport {
  OpGraph graph;
  std::vector<int> rank_of_op;     // the rank (file) each op came from
  std::vector<std::string> files;  // read, in rank order
  int ranks = 0;
  int nodes = 0;                   // read over every file
  int comm_pairs = 0;              // send/receive pairs matched into edges
  std::string version;             // the first file's GlobalMetadata.version
};

// Reads one .et file or a folder of them (PREFIX.R.et, ordered by R; otherwise by
// name) into a graph: compute and collective nodes become ops whose measured cost
// is the node's duration, data dependencies within a rank become edges, and a
// receive node matched to its send (source, destination, tag) joins the sender's
// producer to the receiver's consumers with the message's bytes; an unmatched send
// or receive stays an op of its own. Throws ParseError (truncated file, a first
// message that is not GlobalMetadata, gzip, an unknown node type, a dependency on
// a node the rank does not have) or GraphError (a cycle), one line naming the file,
// the node and the field.
ChakraImport read_chakra_traces(const std::string& path);

// True for a folder or a path ending in .et: what `aware graph import` hands here.
bool is_chakra_path(const std::string& path);

}  // namespace aware
