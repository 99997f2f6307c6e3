// The part every layer's loader shares: open the skeleton, point it at the session's shared
// maps, load it. A layer adds only what is its own (filling a config map after load).
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "probe/layer.h"

namespace dc {

// Base: `layer`, or an interface derived from it that the layer also implements.
template <class Skel, Skel* (*Open)(), int (*Load)(Skel*), void (*Destroy)(Skel*), class Base = layer>
class skeleton_layer : public Base {
 public:
  ~skeleton_layer() override { Destroy(skel_); }

  result<> load(const shared_maps& maps) final
  {
    skel_ = Open();
    if (!skel_)
      return fail("cannot open the " + std::string(this->name()) + " BPF object: " + std::strerror(errno));
    skel_->rodata->dc_wake_mark = maps.wake_mark;
    skel_->rodata->dc_profile_interval_ns = maps.profile_interval_ns;
    skel_->rodata->dc_page_shift = maps.page_shift;
    if constexpr (requires { skel_->rodata->dc_hold_new; })  // objects that add processes
      skel_->rodata->dc_hold_new = maps.hold_new;
    if (auto shared = reuse_shared_maps(skel_->obj, maps); !shared)
      return shared;
    if (auto ready = before_load(*skel_); !ready)
      return ready;
    if (int err = Load(skel_); err)
      return fail("cannot load the " + std::string(this->name()) + " BPF programs: " + std::strerror(-err));
    return after_load(*skel_);
  }

 protected:
  virtual result<> before_load(Skel&) { return {}; }
  virtual result<> after_load(Skel&) { return {}; }
  bpf_object* object() final { return skel_->obj; }
  // The skeleton, once load() has opened it (the session uses only loaded layers).
  Skel* skel() const { return skel_; }

 private:
  Skel* skel_ = nullptr;
};

// The skeleton_layer of bpf/<name>.bpf.c's skeleton (<name>.skel.h).
#define DC_SKELETON_LAYER(name) \
  skeleton_layer<name##_bpf, name##_bpf__open, name##_bpf__load, name##_bpf__destroy>

// A layer whose loader adds nothing to the shared part: a name and a category are all it is.
template <class Skeleton>
class plain_layer final : public Skeleton {
 public:
  plain_layer(std::string_view name, std::string_view category) : name_(name), category_(category) {}
  std::string_view name() const override { return name_; }
  std::string_view category() const override { return category_; }

 private:
  std::string_view name_, category_;
};

}  // namespace dc
