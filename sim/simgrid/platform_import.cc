// A SimGrid XML platform read into a Cluster (see platform_import.h).
#include "sim/simgrid/platform_import.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <vector>

#include <simgrid/s4u.hpp>

#include "core/errors.h"
#include "core/units.h"

namespace sg4 = simgrid::s4u;

namespace aware {

Cluster convert_loaded_platform(const std::string& path) {
  static char arg0[] = "aware-simgrid-worker";
  static char arg1[] = "--log=root.thres:critical";
  static char* argv[] = {arg0, arg1, nullptr};
  int argc = 2;
  sg4::Engine engine(&argc, argv);
  try {
    engine.load_platform(path);
  } catch (const std::exception& e) {
    throw ParseError(path + ": SimGrid cannot load the platform: " + first_line(e.what()));
  }
  std::vector<sg4::Host*> hosts = engine.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return a->get_name() < b->get_name(); });
  if (hosts.empty()) throw ParseError(path + ": the platform has no host");
  Cluster cluster(std::filesystem::path(path).stem().string());
  cluster.set_source(path);
  auto property = [&](const sg4::Host* host, const char* key, bool required, double fallback) {
    const char* text = host->get_property(key);
    if (text == nullptr) {
      if (!required) return fallback;
      throw DeviceError(path + ": host '" + host->get_name() + "' has no property '" + key +
                        "' (device memory in bytes; add <prop id=\"" + key +
                        "\" value=\"16e9\"/> to the host)");
    }
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0' || !std::isfinite(value) || value < 0) {
      throw DeviceError(path + ": host '" + host->get_name() + "': property '" + key +
                        "' must be a non-negative number, got '" + text + "'");
    }
    return value;
  };
  for (const sg4::Host* host : hosts) {
    Device dev;
    dev.name = host->get_name();
    const char* kind = host->get_property("kind");
    dev.kind = kind != nullptr ? kind : "simgrid-host";
    dev.peak_flops = host->get_speed();
    dev.efficiency = 1;
    dev.memory_bytes = property(host, "memory_bytes", true, 0);
    dev.memory_Bps = property(host, "memory_Bps", false, 1e18);
    dev.launch_overhead_us = property(host, "launch_overhead_us", false, 0);
    cluster.add_device(std::move(dev));
  }
  // SimGrid answers a host pair without a <route> (or with one that lists no link)
  // with an empty route, which it then simulates as an infinitely fast one; a
  // forgotten route would make that pair free. Both directions are asked, since
  // a route may be declared one way only (symmetrical="NO").
  auto route_links = [&](const sg4::Host* from, const sg4::Host* to, double* latency_s) {
    std::vector<sg4::Link*> links;
    from->route_to(to, links, latency_s);
    if (links.empty()) {
      throw ParseError(path + ": no route from host '" + from->get_name() + "' to host '" +
                       to->get_name() +
                       "' (or one without links): every pair of devices needs a <route> "
                       "through at least one link");
    }
    // Named here by the file's own link ids, not later by the derived route link.
    for (const sg4::Link* link : links) {
      const double bandwidth = link->get_bandwidth(), latency = link->get_latency();
      if (!std::isfinite(bandwidth) || bandwidth <= 0) {
        throw ParseError(path + ": link '" + link->get_name() +
                         "': bandwidth must be finite and positive, got " +
                         format_number(bandwidth) + " B/s");
      }
      if (!std::isfinite(latency) || latency < 0) {
        throw ParseError(path + ": link '" + link->get_name() +
                         "': latency must be finite and non-negative, got " +
                         format_number(latency) + " s");
      }
    }
    return links;
  };
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (size_t j = i + 1; j < hosts.size(); ++j) {
      double latency_s = 0, back_latency_s = 0;
      const std::vector<sg4::Link*> links = route_links(hosts[i], hosts[j], &latency_s);
      (void)route_links(hosts[j], hosts[i], &back_latency_s);
      double bandwidth = std::numeric_limits<double>::infinity();
      for (const sg4::Link* link : links) bandwidth = std::min(bandwidth, link->get_bandwidth());
      cluster.connect(hosts[i]->get_name(), hosts[j]->get_name(), bandwidth, latency_s * 1e6,
                      "route:" + hosts[i]->get_name() + "-" + hosts[j]->get_name());
    }
  }
  cluster.finalize();
  return cluster;
}

}  // namespace aware
