#include "experiments/mpi/mpi_job.h"

#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "experiments/mpi/mpi_exchange.h"
#ifdef AWARE_HAVE_RL
#include "experiments/mpi/mpi_training.h"
#endif
#include "experiments/mpi/mpi_wait.h"

namespace aware::experiments {
namespace {

// FNV-1a over the command line and the binary's size and modification time:
// cheap, and enough to tell two builds or two commands apart.
std::uint64_t command_hash(int argc, char** argv) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto mix = [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    mix(arg.data(), arg.size() + 1);
  }
  struct stat st {};
  if (stat("/proc/self/exe", &st) == 0) {
    mix(&st.st_size, sizeof(st.st_size));
    mix(&st.st_mtim.tv_sec, sizeof(st.st_mtim.tv_sec));
  }
  return h;
}


// How long a rank waits for the others in a collective by default: far beyond
// any skew between ranks that do equal work, short of a night lost to a hang.
constexpr double kDefaultWaitLimitS = 300;

class OpenMpiJob final : public MpiJob {
 public:
  OpenMpiJob() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // Collective waits end the job past AWARE_MPI_TIMEOUT seconds (0: no limit).
    double limit = kDefaultWaitLimitS;
    if (const char* env = std::getenv("AWARE_MPI_TIMEOUT"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      limit = std::strtod(env, &end);
      if (end == env || *end != '\0' || !(limit >= 0))
        abort(std::string("AWARE_MPI_TIMEOUT must be a number of seconds (0: no limit), got '") + env + "'", 2);
    }
    mpi::set_wait_limit(limit);
    exchange_ = make_mpi_exchange();
#ifdef AWARE_HAVE_RL
    training_ = make_mpi_training();
#endif
    std::atexit([] { MPI_Finalize(); });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  SearchExchange& exchange() override { return *exchange_; }
  double meeting_seconds() const override { return exchange_->meeting_seconds(); }
#ifdef AWARE_HAVE_RL
  rl::ParallelTraining& training() override { return *training_; }
#endif
  void send(int to, int tag, const std::string& text) override {
    MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
  }
  bool poll(int tag, int& from, std::string& text) override {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &arrived, &status);
    if (!arrived) return false;
    from = status.MPI_SOURCE;
    text = take(status);
    return true;
  }
  std::string receive(int from, int& tag) override {
    MPI_Status status;
    MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    tag = status.MPI_TAG;
    return take(status);
  }
  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "\nerror: rank %d: %s\n", rank_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  // Receives the message `status` announced.
  static std::string take(const MPI_Status& status) {
    int n = 0;
    MPI_Get_count(&status, MPI_CHAR, &n);
    std::string text(static_cast<size_t>(n), '\0');
    MPI_Status got;
    MPI_Recv(text.data(), n, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &got);
    return text;
  }

  int rank_ = 0, size_ = 1;
  std::unique_ptr<MpiChainExchange> exchange_;
#ifdef AWARE_HAVE_RL
  std::unique_ptr<rl::ParallelTraining> training_;
#endif
};

OpenMpiJob* g_job = nullptr;

}  // namespace

MpiJob* join_mpi_job(int argc, char** argv) {
  // Open MPI's launcher sets OMPI_COMM_WORLD_SIZE; PMI launchers set PMI_SIZE.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr && std::getenv("PMI_SIZE") == nullptr) return nullptr;
  static OpenMpiJob job;
  g_job = &job;
  unsigned long long mine = command_hash(argc, argv), root = mine;
  mpi::bcast(&root, 1, MPI_UNSIGNED_LONG_LONG, 0, "the start's check of the command line");
  if (root != mine)
    job.abort("this rank's command line or binary differs from rank 0's: every rank must run the same "
              "aware build with the same arguments",
              2);
  return &job;
}

MpiJob* mpi_job() { return g_job; }

}  // namespace aware::experiments
