// The layer registry: one constructor per layer, listed once in layers.cpp.
#pragma once

#include <memory>

#include "probe/layer.h"

namespace dc {

std::unique_ptr<layer> make_syscall_layer();
std::unique_ptr<layer> make_block_layer();
std::unique_ptr<layer> make_pagecache_layer();
std::unique_ptr<layer> make_net_layer();
std::unique_ptr<layer> make_fault_layer();
std::unique_ptr<layer> make_fs_layer();

}  // namespace dc
