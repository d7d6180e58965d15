// The framing and encoding used between the simgrid evaluator (client) and its
// worker processes (aware-simgrid-worker). Private to sim/simgrid: no SimGrid
// headers here, and nothing outside this folder includes it.
//
// A frame is a one-byte kind, a little-endian u64 payload length and the
// payload. Payloads are written with ByteWriter and read back with ByteReader;
// graphs and clusters travel as their JSON documents (core/formats.h), placements
// and results as packed numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cost_model.h"
#include "core/placement.h"

namespace aware::simgrid_wire {

// Client -> worker.
constexpr char kLoadCluster = 'C';  // string platform file ("" to build), string cluster JSON
constexpr char kLoadGraph = 'G';    // string graph JSON
constexpr char kEvaluate = 'E';     // u8 want_trace, u8 debug action, i32 n, n x i32
constexpr char kLoadCosts = 'T';    // encoded CostTable; sent once, right after kHello
// Worker -> client.
constexpr char kHello = 'H';   // string describe (settings in use) after start-up
constexpr char kOk = 'K';      // empty
constexpr char kResult = 'R';  // encoded StepResult (+ trace)
constexpr char kError = 'X';   // u8 error class, string message

// Debug actions for the evaluate request (used by the tests to simulate a
// crashing or hanging worker).
constexpr std::uint8_t kDebugNone = 0;
constexpr std::uint8_t kDebugCrash = 1;
constexpr std::uint8_t kDebugHang = 2;

// Error classes in a kError frame, mapped back to the core exception types.
enum class ErrorClass : std::uint8_t { kError = 0, kParse, kGraph, kConfig, kDevice, kInternal };

class ByteWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void i32(std::int32_t v) { raw(&v, sizeof v); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_.append(s);
  }
  void raw(const void* data, std::size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  const std::string& bytes() const { return bytes_; }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what ByteWriter wrote; throws InternalError on a short payload.
class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  std::uint8_t u8();
  std::int32_t i32();
  std::uint64_t u64();
  double f64();
  std::string str();
  bool done() const { return pos_ == bytes_.size(); }

 private:
  void raw(void* out, std::size_t size);
  const std::string& bytes_;
  std::size_t pos_ = 0;
};

// A cost table as u64 n, then n x (string op, string device kind, f64 µs): the
// exact values the client read, so worker and client price ops identically.
void encode_cost_table(ByteWriter& out, const CostTable& table);
CostTable decode_cost_table(ByteReader& in);

void encode_result(ByteWriter& out, const StepResult& result, const Trace* trace);
// Fills `result`, and `trace` when non-null and the payload carries one.
void decode_result(ByteReader& in, StepResult* result, Trace* trace);

// Blocking frame I/O on a file descriptor. write_frame returns false when the
// peer is gone (EPIPE/ECONNRESET; never raises SIGPIPE on sockets). read_frame
// returns false on end of file; `deadline_ms` < 0 waits forever, otherwise it
// returns false and sets *timed_out after that many milliseconds.
bool write_frame(int fd, char kind, const std::string& payload);
bool read_frame(int fd, char* kind, std::string* payload, long long deadline_ms = -1,
                bool* timed_out = nullptr);

}  // namespace aware::simgrid_wire
