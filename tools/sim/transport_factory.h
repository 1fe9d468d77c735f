// Builds one transport per host for a named transport.
#pragma once

#include "metaroce_adapter.h"
#include "network.h"
#include "rocev2.h"
#include "transport.h"

#include <memory>
#include <string>

namespace mroce::sim {

struct TransportOptions {
  RoceV2Params rocev2;
  MetaRoceParams metaroce;
};

// Owns the transports of every host of one network.
class TransportSet {
public:
  virtual ~TransportSet() = default;
  virtual Transport &at(uint32_t host) = 0;
};

// Creates and installs (Network::set_transport) a transport on every host.
// Returns nullptr and sets `err` if `kind` is unknown or not available.
std::unique_ptr<TransportSet> make_transports(const std::string &kind, const TransportOptions &opts,
                                              Network &net, std::string &err);

} // namespace mroce::sim
