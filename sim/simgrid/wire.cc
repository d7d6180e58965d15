#include "sim/simgrid/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/errors.h"

namespace aware::simgrid_wire {

void ByteReader::raw(void* out, std::size_t size) {
  AWARE_CHECK(pos_ + size <= bytes_.size(), "simgrid worker frame shorter than its content");
  std::memcpy(out, bytes_.data() + pos_, size);
  pos_ += size;
}
std::uint8_t ByteReader::u8() {
  std::uint8_t v;
  raw(&v, sizeof v);
  return v;
}
std::int32_t ByteReader::i32() {
  std::int32_t v;
  raw(&v, sizeof v);
  return v;
}
std::uint64_t ByteReader::u64() {
  std::uint64_t v;
  raw(&v, sizeof v);
  return v;
}
double ByteReader::f64() {
  double v;
  raw(&v, sizeof v);
  return v;
}
std::string ByteReader::str() {
  const std::uint64_t size = u64();
  AWARE_CHECK(pos_ + size <= bytes_.size(), "simgrid worker string longer than its frame");
  std::string s = bytes_.substr(pos_, size);
  pos_ += size;
  return s;
}

void encode_cost_table(ByteWriter& out, const CostTable& table) {
  out.u64(table.us.size());
  for (const auto& [key, us] : table.us) {
    out.str(key.first);
    out.str(key.second);
    out.f64(us);
  }
}

CostTable decode_cost_table(ByteReader& in) {
  CostTable table;
  const std::uint64_t n = in.u64();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string op = in.str();
    std::string kind = in.str();
    table.us[{std::move(op), std::move(kind)}] = in.f64();
  }
  return table;
}

void encode_result(ByteWriter& out, const StepResult& r, const Trace* trace) {
  out.f64(r.step_time_us);
  out.u64(r.device_busy_us.size());
  for (double v : r.device_busy_us) out.f64(v);
  out.u64(r.peak_memory_bytes.size());
  for (double v : r.peak_memory_bytes) out.f64(v);
  out.f64(r.bytes_moved);
  out.i32(r.transfers);
  out.u8(r.feasible ? 1 : 0);
  out.str(r.infeasible_reason);
  out.u8(trace != nullptr ? 1 : 0);
  if (trace == nullptr) return;
  out.u64(trace->ops.size());
  for (const OpSpan& s : trace->ops) {
    out.i32(s.op);
    out.i32(s.device);
    out.f64(s.start_us);
    out.f64(s.end_us);
  }
  out.u64(trace->transfers.size());
  for (const TransferSpan& t : trace->transfers) {
    out.i32(t.src_op);
    out.i32(t.src_output);
    out.i32(t.src_device);
    out.i32(t.dst_device);
    out.f64(t.bytes);
    out.f64(t.start_us);
    out.f64(t.end_us);
    out.u64(t.channels.size());
    for (int c : t.channels) out.i32(c);
    out.str(t.lane);
  }
}

void decode_result(ByteReader& in, StepResult* r, Trace* trace) {
  r->step_time_us = in.f64();
  r->device_busy_us.resize(in.u64());
  for (double& v : r->device_busy_us) v = in.f64();
  r->peak_memory_bytes.resize(in.u64());
  for (double& v : r->peak_memory_bytes) v = in.f64();
  r->bytes_moved = in.f64();
  r->transfers = in.i32();
  r->feasible = in.u8() != 0;
  r->infeasible_reason = in.str();
  if (in.u8() == 0) return;
  Trace scratch;
  Trace& t = trace != nullptr ? *trace : scratch;
  t.clear();
  t.ops.resize(in.u64());
  for (OpSpan& s : t.ops) {
    s.op = in.i32();
    s.device = in.i32();
    s.start_us = in.f64();
    s.end_us = in.f64();
  }
  t.transfers.resize(in.u64());
  for (TransferSpan& s : t.transfers) {
    s.src_op = in.i32();
    s.src_output = in.i32();
    s.src_device = in.i32();
    s.dst_device = in.i32();
    s.bytes = in.f64();
    s.start_us = in.f64();
    s.end_us = in.f64();
    s.channels.resize(in.u64());
    for (int& c : s.channels) c = in.i32();
    s.lane = in.str();
  }
}

namespace {

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    // send() with MSG_NOSIGNAL on the socket pair: a dead peer gives EPIPE, not a signal.
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes before `deadline`; false on EOF, error or timeout.
bool read_all(int fd, char* data, std::size_t size, std::chrono::steady_clock::time_point deadline,
              bool has_deadline, bool* timed_out) {
  while (size > 0) {
    if (has_deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        if (timed_out != nullptr) *timed_out = true;
        return false;
      }
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return false;
      if (ready == 0) continue;  // loop re-checks the deadline
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool write_frame(int fd, char kind, const std::string& payload) {
  char header[9];
  header[0] = kind;
  const std::uint64_t size = payload.size();
  std::memcpy(header + 1, &size, sizeof size);
  return write_all(fd, header, sizeof header) && write_all(fd, payload.data(), payload.size());
}

bool read_frame(int fd, char* kind, std::string* payload, long long deadline_ms, bool* timed_out) {
  if (timed_out != nullptr) *timed_out = false;
  const bool has_deadline = deadline_ms >= 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  char header[9];
  if (!read_all(fd, header, sizeof header, deadline, has_deadline, timed_out)) return false;
  *kind = header[0];
  std::uint64_t size;
  std::memcpy(&size, header + 1, sizeof size);
  payload->resize(size);
  return read_all(fd, payload->data(), size, deadline, has_deadline, timed_out);
}

}  // namespace aware::simgrid_wire
