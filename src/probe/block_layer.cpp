// The block layer's loader (bpf/block.bpf.c) and its count, at the end of a run, of the traced
// requests whose end it has not seen.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "core/bpf_map_keys.h"
#include "core/category.h"
#include "datacrumbs.skel.h"
#include "probe/layers.h"

namespace dc {

namespace {

// Where the request slots lie in the object's .bss: `static` in the BPF source (the skeleton
// would need their struct), so found by name in the object's BTF.
struct slots_place {
  size_t offset = 0;
  size_t count = 0;  // 0: not found
  size_t stride = 0;
};

slots_place find_slots(const bpf_object* obj)
{
  const btf* types = bpf_object__btf(obj);
  int sec = types ? btf__find_by_name_kind(types, ".bss", BTF_KIND_DATASEC) : -1;
  if (sec < 0)
    return {};
  const btf_type* t = btf__type_by_id(types, static_cast<uint32_t>(sec));
  const btf_var_secinfo* v = btf_var_secinfos(t);
  for (uint16_t i = 0; i < btf_vlen(t); ++i, ++v) {
    const btf_type* var = btf__type_by_id(types, v->type);
    if (!var || std::string_view(btf__name_by_offset(types, var->name_off)) != "dc_block_slots")
      continue;
    const btf_type* array = btf__type_by_id(types, var->type);
    if (!array || !btf_is_array(array) || btf_array(array)->nelems == 0)
      return {};
    size_t count = btf_array(array)->nelems;
    return {v->offset, count, v->size / count};
  }
  return {};
}

class block_layer final : public layer {
 public:
  std::string_view name() const override { return "block"; }
  std::string_view category() const override { return category::block; }

  // Counted once the programs no longer run, so that nothing changes under the count: a
  // request held then had started and not been seen to end (still in flight, or ended unseen,
  // bpf/block.bpf.c); no event of it is in the trace.
  void detach() override
  {
    layer::detach();
    if (requests_fd_ >= 0 && !counted_) {
      counted_ = true;
      unended_ = held_in_slots() + held_in_map();
    }
  }

  void add_losses(loss_counts& lost) const override { lost.block_unended += unended_; }

  // block_rq_insert only times a request's wait in the queue, a field of its record; no profile
  // counter holds it.
  bool trace_only(const bpf_program* prog) const override
  {
    return std::string_view(bpf_program__name(prog)) == "dc_block_rq_insert";
  }

 protected:
  result<> after_load(datacrumbs_bpf& skel) override
  {
    requests_fd_ = bpf_map__fd(skel.maps.dc_block_requests);
    bss_fd_ = bpf_map__fd(skel.maps.bss);
    bss_size_ = bpf_map__value_size(skel.maps.bss);
    slots_ = find_slots(skel.obj);
    if (slots_.count == 0 || slots_.stride < sizeof(uint64_t) ||
        slots_.offset + slots_.count * slots_.stride > bss_size_)
      return fail("the block layer's request slots are not in the object's .bss");
    return {};
  }

 private:
  // A slot begins with its request's address, 0 when free (struct dc_block_slot).
  uint64_t held_in_slots() const
  {
    std::vector<char> bss(bss_size_);
    uint32_t zero = 0;
    if (bss_fd_ < 0 || bpf_map_lookup_elem(bss_fd_, &zero, bss.data()) != 0)
      return 0;
    uint64_t held = 0;
    for (size_t i = 0; i < slots_.count; ++i) {
      uint64_t rq = 0;
      std::memcpy(&rq, bss.data() + slots_.offset + i * slots_.stride, sizeof(rq));
      held += rq != 0;
    }
    return held;
  }

  uint64_t held_in_map() const
  {
    uint64_t held = 0;
    for_each_map_key<uint64_t>(requests_fd_, [&](uint64_t) { ++held; });
    return held;
  }

  int requests_fd_ = -1;
  int bss_fd_ = -1;
  size_t bss_size_ = 0;
  slots_place slots_;
  bool counted_ = false;
  uint64_t unended_ = 0;
};

}  // namespace

std::unique_ptr<layer> make_block_layer()
{
  return std::make_unique<block_layer>();
}

}  // namespace dc
