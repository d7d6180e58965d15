// One device's ready tasks, first come first served: the order in which the CPU
// backend's worker runs them under order=fifo, and the order in which the
// analytic simulator queues a device's ready ops (sim/analytic/contention.cc: by
// ready time, then topological rank).
//
// A task's local dependencies (the ops and the incoming copies of its own device
// that it waits for) are counted down as they finish; it becomes ready when the
// last of them ends, at that end time. Copies wait for a producer on another
// device: they are polled. Ties go to the earlier task in the device's list
// (StepPlan::device_tasks, in topological-rank order).
//
// Not thread-safe: one per worker thread. No allocation after reset()'s first call.
#pragma once

#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "hw/step_plan.h"

namespace aware {

class FifoReadyQueue {
 public:
  FifoReadyQueue(const StepPlan& plan, int device);

  // Starts a run: nothing finished; tasks without dependencies ready at 0.
  void reset();
  // Copies whose producer `done(op)` says has finished become ready at
  // `end_us(op)`. Call before pop() while copies wait (waiting_copies() > 0).
  void poll(const std::function<bool(int)>& done, const std::function<double(int)>& end_us);
  // The position (in the device's task list) of the task that became ready
  // first, removed from the queue; -1 when none is ready.
  int pop();
  // The task at `position` ended at `end_us`: its dependents may become ready.
  void finished(int position, double end_us);

  int waiting_copies() const { return static_cast<int>(waiting_.size()); }
  int size() const { return static_cast<int>(tasks_); }

 private:
  using Entry = std::pair<double, int>;  // (ready time, position): smallest first
  size_t tasks_ = 0;
  std::vector<int> dependencies_;              // by position: local tasks it waits for
  std::vector<std::vector<int>> dependents_;   // by position: local tasks that wait for it
  std::vector<std::pair<int, int>> remote_;    // (position, producer op) of every copy
  std::vector<char> is_remote_;                // by position: a copy
  std::vector<int> count_;
  std::vector<std::pair<int, int>> waiting_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready_;
};

}  // namespace aware
