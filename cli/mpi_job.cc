#include "cli/mpi_job.h"

#include <mpi.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "experiments/mpi/mpi_exchange.h"

namespace aware::cli {
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

#ifdef AWARE_HAVE_RL
class MpiTraining final : public rl::ParallelTraining {
 public:
  MpiTraining(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Summed on rank 0 and broadcast: the same bits everywhere, whatever the
  // reduction's order (an allreduce may round differently per rank).
  void average(std::vector<float>& values) override {
    std::vector<float> total(values.size());
    const int n = static_cast<int>(values.size());
    MPI_Reduce(values.data(), total.data(), n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0)
      for (float& v : total) v /= static_cast<float>(size_);
    MPI_Bcast(total.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    values.swap(total);
  }
  void broadcast(std::vector<float>& values) override {
    MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
  double minimum(double value) override { return reduce(value, MPI_MIN); }
  double maximum(double value) override { return reduce(value, MPI_MAX); }
  double sum(double value) override {
    double total = 0;
    MPI_Reduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return total;
  }

 private:
  static double reduce(double value, MPI_Op op) {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
    return out;
  }
  int rank_, size_;
};
#endif

class OpenMpiJob final : public MpiJob {
 public:
  OpenMpiJob() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    exchange_ = make_mpi_exchange();
#ifdef AWARE_HAVE_RL
    training_ = std::make_unique<MpiTraining>(rank_, size_);
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
  std::unique_ptr<MpiTraining> training_;
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
  MPI_Bcast(&root, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (root != mine)
    job.abort("this rank's command line or binary differs from rank 0's: every rank must run the same "
              "aware build with the same arguments",
              2);
  return &job;
}

MpiJob* mpi_job() { return g_job; }

}  // namespace aware::cli
