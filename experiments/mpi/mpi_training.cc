#include "experiments/mpi/mpi_training.h"

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "experiments/mpi/mpi_wait.h"

namespace aware {
namespace {

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
    mpi::reduce(values.data(), total.data(), n, MPI_FLOAT, MPI_SUM, 0, kWhat);
    if (rank_ == 0)
      for (float& v : total) v /= static_cast<float>(size_);
    mpi::bcast(total.data(), n, MPI_FLOAT, 0, kWhat);
    values.swap(total);
  }
  void broadcast(std::vector<float>& values) override {
    mpi::bcast(values.data(), static_cast<int>(values.size()), MPI_FLOAT, 0, kWhat);
  }
  std::string broadcast_text(const std::string& text) override {
    unsigned long long n = text.size();
    mpi::bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, kWhat);
    std::string out = rank_ == 0 ? text : std::string(static_cast<size_t>(n), '\0');
    // In pieces: a checkpoint may exceed an int's count of bytes.
    constexpr unsigned long long kPiece = 1ULL << 30;
    for (unsigned long long at = 0; at < n; at += kPiece)
      mpi::bcast(out.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_CHAR, 0, kWhat);
    return out;
  }
  std::vector<std::string> gather_text(const std::string& text) override {
    const int mine = static_cast<int>(text.size());
    std::vector<int> counts(static_cast<size_t>(size_)), displacements(static_cast<size_t>(size_));
    mpi::gather(&mine, 1, MPI_INT, counts.data(), 0, kWhat);
    std::string all;
    if (rank_ == 0) {
      long long at = 0;
      for (int r = 0; r < size_; ++r) {
        displacements[static_cast<size_t>(r)] = static_cast<int>(at);
        at += counts[static_cast<size_t>(r)];
      }
      all.resize(static_cast<size_t>(at));
    }
    mpi::gatherv(text.data(), mine, MPI_CHAR, all.data(), counts.data(), displacements.data(), 0, kWhat);
    std::vector<std::string> out;
    if (rank_ == 0)
      for (int r = 0; r < size_; ++r)
        out.push_back(all.substr(static_cast<size_t>(displacements[static_cast<size_t>(r)]),
                                 static_cast<size_t>(counts[static_cast<size_t>(r)])));
    return out;
  }
  double minimum(double value) override { return reduce(value, MPI_MIN); }
  double maximum(double value) override { return reduce(value, MPI_MAX); }
  double sum(double value) override {
    double total = 0;
    mpi::reduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, 0, kWhat);
    mpi::bcast(&total, 1, MPI_DOUBLE, 0, kWhat);
    return total;
  }

 private:
  static constexpr const char* kWhat = "a step of the data-parallel training";
  static double reduce(double value, MPI_Op op) {
    double out = 0;
    mpi::allreduce(&value, &out, 1, MPI_DOUBLE, op, kWhat);
    return out;
  }
  int rank_, size_;
};

}  // namespace

std::unique_ptr<rl::ParallelTraining> make_mpi_training() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiTraining>(rank, size);
}

}  // namespace aware
