// The layer registry: one constructor per layer, listed once in layers.cpp.
#pragma once

#include <memory>

#include <string>
#include <vector>

#include "config/probe_config.h"
#include "probe/layer.h"

namespace dc {

std::unique_ptr<layer> make_syscall_layer();
std::unique_ptr<layer> make_block_layer();
std::unique_ptr<layer> make_pagecache_layer();
std::unique_ptr<layer> make_net_layer();
std::unique_ptr<layer> make_fault_layer();
std::unique_ptr<layer> make_fs_layer();

// The daemon's beacon: processes of `uid` that load the client library register themselves.
struct beacon_target {
  std::string library;  // libdatacrumbs_client.so
  uint32_t uid = 0;
};
std::unique_ptr<layer> make_beacon_layer(beacon_target target);

// Every layer's name, asked for or not: each program of the object belongs to one of them (or
// to the process tracker).
std::vector<std::string> all_layer_names();

// The kernel layers a config selects: the syscall layer for a `syscalls` entry, the layers
// whose names a `kernel` entry's regex matches.
std::vector<std::string> kernel_layers_in(const probe_config& config);

}  // namespace dc
