#include "transport_factory.h"

#include <string>
#include <vector>

namespace mroce::sim {

namespace {

class RoceV2Set final : public TransportSet {
public:
  RoceV2Set(const RoceV2Params &p, Network &net) {
    for (uint32_t h = 0; h < net.num_hosts(); ++h)
      owned_.push_back(std::make_unique<RoceV2Transport>(net.env(h), p, &dir_));
    for (auto &t : owned_)
      dir_.hosts.push_back(t.get());
  }
  Transport &at(uint32_t host) override { return *owned_[host]; }

private:
  RoceV2Directory dir_;
  std::vector<std::unique_ptr<RoceV2Transport>> owned_;
};

class MetaRoceSet final : public TransportSet {
public:
  MetaRoceSet(const MetaRoceParams &p, Network &net) {
    for (uint32_t h = 0; h < net.num_hosts(); ++h)
      owned_.push_back(std::make_unique<MetaRoceTransport>(net.env(h), p, &dir_));
    for (auto &t : owned_)
      dir_.hosts.push_back(t.get());
  }
  Transport &at(uint32_t host) override { return *owned_[host]; }

private:
  MetaRoceDirectory dir_;
  std::vector<std::unique_ptr<MetaRoceTransport>> owned_;
};

} // namespace

std::unique_ptr<TransportSet> make_transports(const std::string &kind, const TransportOptions &opts,
                                              Network &net, std::string &err) {
  std::unique_ptr<TransportSet> set;
  if (kind == "rocev2") {
    set = std::make_unique<RoceV2Set>(opts.rocev2, net);
  } else if (kind == "metaroce") {
    if (opts.metaroce.paths == 0 || opts.metaroce.paths > MROCE_MAX_PATHS) {
      err = "metaroce: paths must be in [1, " + std::to_string(MROCE_MAX_PATHS) + "]";
      return nullptr;
    }
    set = std::make_unique<MetaRoceSet>(opts.metaroce, net);
  } else {
    err = "unknown transport \"" + kind + "\" (metaroce or rocev2)";
    return nullptr;
  }
  for (uint32_t h = 0; h < net.num_hosts(); ++h)
    net.set_transport(h, &set->at(h));
  return set;
}

} // namespace mroce::sim
