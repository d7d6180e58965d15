// The counting allocator the ATen kernels measure memory with (hw/aten_allocator.h).
#include "hw/aten_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace aware {

namespace {

// Live and peak bytes of ATen's allocations per device (the device the worker
// thread that allocated runs); installed once over the default CPU allocator.
constexpr int kMaxCountedDevices = 4096;
std::atomic<long long> g_live[kMaxCountedDevices];
std::atomic<long long> g_peak[kMaxCountedDevices];
thread_local int t_device = -1;

// Freed blocks of at least kCacheMinBytes are kept, by size, for the next
// allocation of that size, as PyTorch's CUDA caching allocator keeps its blocks.
// Without it, glibc hands every block over 32 MiB back to the kernel at its free
// (mmap's threshold cannot go higher), so each step faulted those pages in again:
// 18,500 page faults a step on hw-validate's transformer (two 37.9 MB gradients
// of its vocabulary table), about a tenth of its step and a source of its spread.
// The counts below are of live bytes and do not include what the cache holds.
constexpr long long kCacheMinBytes = 1LL << 20;
constexpr long long kCacheMaxBytes = 4LL << 30;  // beyond this, freed blocks go back
std::unordered_multimap<long long, c10::DataPtr>& cache() {
  static auto* map = new std::unordered_multimap<long long, c10::DataPtr>();  // never freed: see counted()
  return *map;
}
long long g_cached_bytes = 0;        // guarded by g_counted_mutex
std::atomic<long long> g_cache_hits{0};

// Each allocation by its address: the inner allocator's pointer (which frees it),
// its size and the device it is counted on. ATen's raw_allocate wants a DataPtr
// whose context is its data, so the bookkeeping is keyed by address.
struct Counted {
  c10::DataPtr inner;
  long long bytes;
  int device;
};
std::mutex g_counted_mutex;
std::unordered_map<void*, Counted>& counted() {
  static auto* map = new std::unordered_map<void*, Counted>();  // outlives every tensor
  return *map;
}

void counted_delete(void* data) {
  Counted c;
  {
    std::lock_guard lock(g_counted_mutex);
    auto it = counted().find(data);
    if (it == counted().end()) return;
    c = std::move(it->second);
    counted().erase(it);
    if (c.bytes >= kCacheMinBytes && g_cached_bytes + c.bytes <= kCacheMaxBytes) {
      g_cached_bytes += c.bytes;
      cache().emplace(c.bytes, std::move(c.inner));  // kept for the next allocation of its size
    }
  }
  if (c.device >= 0) g_live[c.device].fetch_sub(c.bytes, std::memory_order_relaxed);
}  // c.inner (unless cached) frees the memory here

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t n) const override {
    c10::DataPtr inner = from_cache(static_cast<long long>(n));
    if (!inner) inner = inner_->allocate(n);
    void* data = inner.get();
    if (data == nullptr) return inner;  // a zero-byte allocation
    const int device = t_device;
    if (device >= 0) {
      const long long now = g_live[device].fetch_add(static_cast<long long>(n), std::memory_order_relaxed) +
                            static_cast<long long>(n);
      long long peak = g_peak[device].load(std::memory_order_relaxed);
      while (now > peak && !g_peak[device].compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
      }
    }
    const c10::Device where = inner.device();
    {
      std::lock_guard lock(g_counted_mutex);
      counted()[data] = Counted{std::move(inner), static_cast<long long>(n), device};
    }
    return {data, data, &counted_delete, where};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &counted_delete; }

 private:
  // A cached block of exactly n bytes, or an empty pointer.
  static c10::DataPtr from_cache(long long n) {
    if (n < kCacheMinBytes) return {};
    std::lock_guard lock(g_counted_mutex);
    auto it = cache().find(n);
    if (it == cache().end()) return {};
    c10::DataPtr block = std::move(it->second);
    cache().erase(it);
    g_cached_bytes -= n;
    g_cache_hits.fetch_add(1, std::memory_order_relaxed);
    return block;
  }
  c10::Allocator* inner_;
};

}  // namespace

void install_counting_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator counting(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&counting, /*priority=*/1);
  });
}

void reset_counted_bytes(int devices) {
  for (int d = 0; d < std::min(devices, kMaxCountedDevices); ++d) {
    g_live[d].store(0);
    g_peak[d].store(0);
  }
}

void count_allocations_on(int device) { t_device = device >= 0 && device < kMaxCountedDevices ? device : -1; }

long long cached_block_reuses() { return g_cache_hits.load(); }

double counted_peak_bytes(int device) {
  return device >= 0 && device < kMaxCountedDevices ? static_cast<double>(g_peak[device].load()) : 0.0;
}

}  // namespace aware
