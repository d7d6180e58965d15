#include "hw/op_kernels.h"

namespace aware {

namespace {
OpKernelsFactory& cpu_factory() {
  static OpKernelsFactory factory;
  return factory;
}
}  // namespace

void set_cpu_kernels_factory(OpKernelsFactory factory) { cpu_factory() = std::move(factory); }
bool have_cpu_kernels() { return static_cast<bool>(cpu_factory()); }
std::unique_ptr<OpKernels> make_cpu_kernels() { return cpu_factory() ? cpu_factory()() : nullptr; }

}  // namespace aware
