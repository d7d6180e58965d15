// Worker side: a SimGrid XML platform file read into a Cluster (what
// aware-simgrid-worker answers when the client loads an .xml cluster). Only the
// worker links this; the header names no SimGrid type.
#pragma once

#include <string>

#include "core/cluster.h"

namespace aware {

// Loads the SimGrid XML platform at `path` in this process's Engine and turns it
// into a Cluster: hosts (sorted by name) become devices, with peak_flops the host
// speed, efficiency 1 and memory from the host properties `memory_bytes`
// (required), `memory_Bps` (default 1e18) and `launch_overhead_us` (default 0),
// `kind` from property `kind` (default "simgrid-host"); each host pair gets a
// direct link with the route's bottleneck bandwidth and summed latency. The
// cluster's source() is `path`. Throws ParseError / DeviceError naming the file;
// ParseError also for a host pair without a route (either way) through at least
// one link, and for a link on a route whose bandwidth is not positive or whose
// latency is negative.
Cluster convert_loaded_platform(const std::string& path);

}  // namespace aware
