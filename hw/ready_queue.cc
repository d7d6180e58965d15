#include "hw/ready_queue.h"

namespace aware {

FifoReadyQueue::FifoReadyQueue(const StepPlan& plan, int device) {
  const std::vector<PlannedTask>& tasks = plan.device_tasks[static_cast<size_t>(device)];
  tasks_ = tasks.size();
  std::vector<int> op_at(plan.ops.size(), -1), copy_at(plan.copies.size(), -1);
  for (size_t i = 0; i < tasks.size(); ++i)
    (tasks[i].is_copy ? copy_at : op_at)[static_cast<size_t>(tasks[i].index)] = static_cast<int>(i);
  dependencies_.assign(tasks.size(), 0);
  is_remote_.assign(tasks.size(), 0);
  dependents_.assign(tasks.size(), {});
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].is_copy) {
      remote_.push_back({static_cast<int>(i), plan.copies[static_cast<size_t>(tasks[i].index)].src_op});
      is_remote_[i] = 1;
      continue;
    }
    const PlannedOp& p = plan.ops[static_cast<size_t>(tasks[i].index)];
    for (int o : p.wait_ops) {
      dependents_[static_cast<size_t>(op_at[static_cast<size_t>(o)])].push_back(static_cast<int>(i));
      ++dependencies_[i];
    }
    for (int c : p.wait_copies) {
      dependents_[static_cast<size_t>(copy_at[static_cast<size_t>(c)])].push_back(static_cast<int>(i));
      ++dependencies_[i];
    }
  }
  std::vector<Entry> storage;
  storage.reserve(tasks.size());
  ready_ = decltype(ready_)(std::greater<Entry>(), std::move(storage));
  waiting_.reserve(remote_.size());
}

void FifoReadyQueue::reset() {
  count_ = dependencies_;
  while (!ready_.empty()) ready_.pop();
  waiting_ = remote_;
  for (size_t i = 0; i < tasks_; ++i)
    if (!is_remote_[i] && count_[i] == 0) ready_.push({0.0, static_cast<int>(i)});
}

void FifoReadyQueue::poll(const std::function<bool(int)>& done, const std::function<double(int)>& end_us) {
  for (size_t i = 0; i < waiting_.size();) {
    if (done(waiting_[i].second)) {
      ready_.push({end_us(waiting_[i].second), waiting_[i].first});
      waiting_[i] = waiting_.back();
      waiting_.pop_back();
    } else {
      ++i;
    }
  }
}

int FifoReadyQueue::pop() {
  if (ready_.empty()) return -1;
  const int position = ready_.top().second;
  ready_.pop();
  return position;
}

void FifoReadyQueue::finished(int position, double end_us) {
  for (int next : dependents_[static_cast<size_t>(position)])
    if (--count_[static_cast<size_t>(next)] == 0) ready_.push({end_us, next});
}

}  // namespace aware
