#include "transport_factory.h"

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

} // namespace

std::unique_ptr<TransportSet> make_transports(const std::string &kind, const TransportOptions &opts,
                                              Network &net, std::string &err) {
  std::unique_ptr<TransportSet> set;
  if (kind == "rocev2") {
    set = std::make_unique<RoceV2Set>(opts.rocev2, net);
  } else if (kind == "metaroce") {
    // The MetaRoCE slot: an adapter that drives the protocol core in
    // kernel/core/ (the very code built into metaroce.ko) through the
    // Transport interface belongs here.  Until it exists, say so: never
    // fall back to another transport.
    err = "transport metaroce is not available yet: the simulator adapter for the "
          "protocol core (kernel/core) has not been written";
    return nullptr;
  } else {
    err = "unknown transport \"" + kind + "\" (metaroce or rocev2)";
    return nullptr;
  }
  for (uint32_t h = 0; h < net.num_hosts(); ++h)
    net.set_transport(h, &set->at(h));
  return set;
}

} // namespace mroce::sim
